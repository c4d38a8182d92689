#if canImport(Darwin)
    import Darwin

    /// Readiness notification with `kqueue(2)`, plus an `EVFILT_USER` event that other threads trigger to
    /// wake the loop. Mirrors `Selector+Epoll.swift`.
    final class Selector {
        private let queueFD: Int32
        private var events: UnsafeMutableBufferPointer<kevent>
        private var interests: [Int32: SelectorInterest] = [:]
        private static let wakeupIdent: UInt = 0xA51C

        init(maxEventsPerWait: Int = 1024) throws(SocketError) {
            queueFD = try Posix.check("kqueue") { kqueue() }
            events = .allocate(capacity: maxEventsPerWait)
            var change = kevent(
                ident: Selector.wakeupIdent, filter: Int16(EVFILT_USER), flags: UInt16(EV_ADD | EV_CLEAR),
                fflags: 0, data: 0, udata: nil)
            _ = kevent(queueFD, &change, 1, nil, 0, nil)
        }

        deinit {
            events.deallocate()
            Posix.close(queueFD)
        }

        func register(_ fd: Int32, token: UInt64, interest: SelectorInterest) throws(SocketError) {
            try apply(fd, token: token, old: [], new: interest)
        }

        func reregister(_ fd: Int32, token: UInt64, interest: SelectorInterest) throws(SocketError) {
            try apply(fd, token: token, old: interests[fd] ?? [], new: interest)
        }

        func deregister(_ fd: Int32) {
            try? apply(fd, token: 0, old: interests[fd] ?? [], new: [])
            interests[fd] = nil
        }

        private func apply(_ fd: Int32, token: UInt64, old: SelectorInterest, new: SelectorInterest) throws(SocketError) {
            interests[fd] = new
            var changes: [kevent] = []
            for (flag, filter) in [(SelectorInterest.read, EVFILT_READ), (.write, EVFILT_WRITE)] {
                let action: Int32? = new.contains(flag) ? EV_ADD : (old.contains(flag) ? EV_DELETE : nil)
                guard let action else { continue }
                changes.append(
                    kevent(
                        ident: UInt(fd), filter: Int16(filter), flags: UInt16(action), fflags: 0, data: 0,
                        udata: UnsafeMutableRawPointer(bitPattern: UInt(token))))
            }
            guard !changes.isEmpty else { return }
            _ = try Posix.check("kevent") { kevent(queueFD, changes, Int32(changes.count), nil, 0, nil) }
        }

        func wait(timeoutNanoseconds: UInt64?, _ body: (SelectorEvent) -> Void) throws(SocketError) {
            var timeout = timespec()
            let count: Int32
            if let nanoseconds = timeoutNanoseconds {
                timeout.tv_sec = Int(nanoseconds / 1_000_000_000)
                timeout.tv_nsec = Int(nanoseconds % 1_000_000_000)
                count = try Posix.check("kevent") { kevent(queueFD, nil, 0, events.baseAddress, Int32(events.count), &timeout) }
            } else {
                count = try Posix.check("kevent") { kevent(queueFD, nil, 0, events.baseAddress, Int32(events.count), nil) }
            }
            for index in 0..<Int(count) {
                let event = events[index]
                if event.filter == Int16(EVFILT_USER) { continue }
                let token = UInt64(UInt(bitPattern: event.udata))
                let failed = event.flags & UInt16(EV_EOF | EV_ERROR) != 0
                body(
                    SelectorEvent(
                        token: token,
                        readable: event.filter == Int16(EVFILT_READ) || failed,
                        writable: event.filter == Int16(EVFILT_WRITE) || failed))
            }
        }

        func wakeup() {
            var change = kevent(
                ident: Selector.wakeupIdent, filter: Int16(EVFILT_USER), flags: 0,
                fflags: UInt32(NOTE_TRIGGER), data: 0, udata: nil)
            _ = kevent(queueFD, &change, 1, nil, 0, nil)
        }
    }
#endif
