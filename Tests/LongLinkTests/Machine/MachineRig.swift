@testable import AsyncSocket
import Foundation
@testable import LongLink

/// A ``LinkMachine`` driven by hand, with no socket, loop or queue: each input's actions come back as
/// lines ("connect 127.0.0.1:7000", "write PING", "schedule heartbeat in 180 s", "emit connected to …"),
/// and the timers it asks for run in virtual time, on a ``ManualClock`` that only ``advance(by:)`` moves.
struct MachineRig<Codec: LinkCodec> {
    var machine: LinkMachine<Codec>
    let clock = ManualClock()
    /// Timers the machine asked for and has not cancelled: kind, deadline (clock ns), order asked.
    private var timers: [(timer: LinkTimer, deadline: UInt64, order: Int)] = []
    private var order = 0

    init(
        codec: Codec, configuration: LongLinkClient<Codec>.Configuration, smart: SmartHeartbeat? = nil,
        delivery: ReliableDelivery<Codec.Message>? = nil
    ) {
        let driver = smart.map { SmartHeartbeatDriver(policy: $0, logger: .init(label: "test")) }
        machine = LinkMachine(codec: codec, configuration: configuration, smart: driver, delivery: delivery)
    }

    /// The timers running now, by name, soonest first.
    var runningTimers: [String] {
        timers.sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }.map { "\($0.timer)" }
    }

    /// Feeds `input` at the clock's time; returns its actions as lines.
    mutating func feed(_ input: LinkInput<Codec>) -> [String] {
        machine.now = clock.nanoseconds
        let actions = machine.handle(input)
        for action in actions {
            switch action {
            case .schedule(let timer, let delay):
                timers.removeAll { $0.timer == timer }
                order += 1
                timers.append((timer, clock.nanoseconds &+ UInt64(delay.nanosecondsValue), order))
            case .cancel(let timer):
                timers.removeAll { $0.timer == timer }
            default:
                break
            }
        }
        return actions.map(Self.line)
    }

    /// Moves the clock forward by `duration`, firing the timers that fall due on the way, soonest first
    /// (ties in the order they were asked for), each at its deadline; returns all their actions.
    mutating func advance(by duration: Duration) -> [String] {
        let target = clock.nanoseconds &+ UInt64(duration.nanosecondsValue)
        var lines: [String] = []
        while let next = timers.filter({ $0.deadline <= target }).min(by: { ($0.deadline, $0.order) < ($1.deadline, $1.order) }) {
            timers.removeAll { $0.timer == next.timer }
            clock.moveForward(by: .nanoseconds(Int64(next.deadline - clock.nanoseconds)))
            lines += feed(.timerFired(next.timer))
        }
        clock.moveForward(by: .nanoseconds(Int64(target - clock.nanoseconds)))
        return lines
    }

    /// One action as a line.
    static func line(_ action: LinkAction<Codec>) -> String {
        switch action {
        case .watchNetwork: return "watch network"
        case .connect(let endpoint, let timeout): return "connect \(endpoint) within \(Int(timeout)) s"
        case .startTLS(let tls): return "start TLS for \(tls.peerName ?? "?")"
        case .startReading: return "read"
        case .write(let data, let tag):
            let text = String(decoding: data.dropFirst(4), as: UTF8.self)
            return tag == LinkMachine<Codec>.controlTag ? "write \(text)" : "write \(text) #\(tag)"
        case .close(let afterWriting): return afterWriting ? "close after writing" : "close"
        case .abandonSocket: return "abandon socket"
        case .emit(let event): return "emit \(event)"
        case .schedule(let timer, let delay): return "schedule \(timer) in \(delay.secondsText) s"
        case .cancel(let timer): return "cancel \(timer)"
        case .scheduleFlush: return "flush at the end of the pass"
        case .persist(let last, let then): return "persist through \(last), then \(then)"
        }
    }
}

/// Frames as the socket would hand them over.
extension MachineRig where Codec.Decoder.Frame == Data {
    /// Feeds the frame of `message` (already decoded by the socket: its bytes without the length).
    mutating func receive(_ message: String) -> [String] { feed(.frame(Data(message.utf8))) }
}
