#if os(Linux)
    import TestSupport

    // The child-process helpers moved to TestSupport's ServerProcess.swift (NATSClientTests starts its
    // nats-server with them too); these names let InteropTests' files use them without importing it.
    typealias ServerProcess = TestSupport.ServerProcess
    typealias ClientProcess = TestSupport.ClientProcess
    typealias ServerError = TestSupport.ServerError
#endif
