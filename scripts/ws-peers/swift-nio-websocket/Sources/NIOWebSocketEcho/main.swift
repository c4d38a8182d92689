// NIOWebSocketEcho — WebSocket echo server on SwiftNIO's NIOWebSocket, the NIO peer of
// scripts/bench-websocket.sh.
//
//   NIOWebSocketEcho -p PORT [-t THREADS] [-f MAX_FRAME_BYTES]
//
// Upgrades any path on 127.0.0.1:PORT (NIOWebSocketServerUpgrader behind NIO's HTTP/1 server
// pipeline); every data frame goes back as it came (same opcode, same FIN, unmasked), pings are
// answered with pongs carrying the same payload, and a Close is answered with the peer's code,
// then the channel closes. The idiomatic channel-handler form: EchoHandler writes each frame in
// channelRead and flushes once per read burst in channelReadComplete.
//
// -f: NIO's frame limit. NIO's default is 16 KiB; the bench sends 1 MiB messages, so the default
//     here is 16 MiB, our library's default frame limit (issue 33 §1). NIO has no message limit
//     (it does not reassemble: fragments are echoed as fragments) and no permessage-deflate.
// -t: event-loop threads (default 1, as the other peers run).
//
// Listens with backlog 4096, SO_REUSEADDR, TCP_NODELAY on accepted channels; all else NIO's
// defaults. SIGTERM ends it (default action).
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

final class EchoHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private var closeSent = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary, .continuation:
            let echo = WebSocketFrame(fin: frame.fin, opcode: frame.opcode, data: frame.unmaskedData)
            context.write(wrapOutboundOut(echo), promise: nil)
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            context.write(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            guard !closeSent else { return }
            closeSent = true
            var data = frame.unmaskedData
            let code = data.readSlice(length: 2) ?? context.channel.allocator.buffer(capacity: 0)
            let close = WebSocketFrame(fin: true, opcode: .connectionClose, data: code)
            context.writeAndFlush(wrapOutboundOut(close)).whenComplete { _ in context.close(promise: nil) }
        case .pong:
            break
        default:
            context.close(promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}

var port = 9201
var threads = 1
var maxFrameSize = 16 << 20
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "-p": port = Int(arguments.next() ?? "") ?? port
    case "-t": threads = Int(arguments.next() ?? "") ?? threads
    case "-f": maxFrameSize = Int(arguments.next() ?? "") ?? maxFrameSize
    default:
        fputs("usage: NIOWebSocketEcho -p PORT [-t THREADS] [-f MAX_FRAME_BYTES]\n", stderr)
        exit(64)
    }
}

let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
let upgrader = NIOWebSocketServerUpgrader(
    maxFrameSize: maxFrameSize,
    shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
    upgradePipelineHandler: { channel, _ in channel.pipeline.addHandler(EchoHandler()) }
)
let bootstrap = ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 4096)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.pipeline.configureHTTPServerPipeline(
            withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in })
        )
    }
let channel = try bootstrap.bind(host: "127.0.0.1", port: port).wait()
print("NIOWebSocketEcho listening on 127.0.0.1:\(port) (pid \(getpid()), \(threads) thread(s))")
fflush(stdout)
try channel.closeFuture.wait()
