// LongLink over WebSocket: a server that takes LongLink sessions on a TCP port and, beside it, as
// WebSocket upgrades on another; and a client of the WebSocket port. The article "LongLink over
// WebSocket" (LongLinkOverWebSocket.md) shows this file; scripts/docs.sh type-checks it.
import Dispatch
import ChatProtocol
import LongLink

// The server: TCP on 7777 as before, and upgrades to ws://HOST:8080/link.
var configuration = LongLinkServer<ChatCodec>.Configuration(port: 7777)
configuration.webSocket = .init(port: 8080, path: "/link")
let server = LongLinkServer(codec: ChatCodec(), configuration: configuration, eventQueue: .main) { event in
    // Sessions over TCP and over WebSocket are the same kind: the app cannot tell them apart.
    if case .received(let message, let session) = event { session.send(message) }
}
try server.start()

// The client: the endpoint is a URL; heartbeats, reconnects and the offline queue are unchanged.
let endpoint = try Endpoint(webSocket: "ws://127.0.0.1:8080/link")
let link = LongLinkClient(codec: ChatCodec(), configuration: .init(endpoints: [endpoint]), eventQueue: .main) { event in
    print(event)  // "connected to 127.0.0.1:8080", "received …", "disconnected (…)"
}
link.connect()
dispatchMain()
