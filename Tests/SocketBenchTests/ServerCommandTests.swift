import Testing
@testable import SocketBench

@Suite struct ServerCommandTests {
    @Test func parsesEveryOption() throws {
        let options = try ServerCommand.parse(["raw", "--host", "::1", "--port", "0", "--loops", "2", "--reuse-port", "--workers", "3"])
        #expect(options == ServerCommand.Options(mode: .raw, host: "::1", port: 0, loops: 2, reusePort: true, workers: 3))
    }

    @Test func defaultsAreLP4OnLoopbackPort9100() throws {
        #expect(try ServerCommand.parse(["lp4"]) == ServerCommand.Options())
        #expect(ServerCommand.Options().port == 9100)
    }

    @Test func discardIsAMode() throws {
        #expect(try ServerCommand.parse(["discard", "--port", "0"]) == ServerCommand.Options(mode: .discard, port: 0))
    }

    @Test func rejectsAnUnknownModeAndOutOfRangeNumbers() {
        #expect(throws: ArgumentError.self) { try ServerCommand.parse(["udp"]) }
        #expect(throws: ArgumentError.self) { try ServerCommand.parse(["lp4", "--port", "65536"]) }
        #expect(throws: ArgumentError.self) { try ServerCommand.parse(["lp4", "--loops"]) }
    }

    @Test func workersGetTheArgumentsWithoutTheWorkersOption() {
        #expect(["lp4", "--workers", "4", "--port", "1"].removingOption("--workers") == ["lp4", "--port", "1"])
    }
}
