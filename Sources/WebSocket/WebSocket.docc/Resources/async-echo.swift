import Foundation
import WebSocket

// The server: upgrades from one Origin accepted, every message echoed.
var options = WebSocketConnectionListener.Options()
options.shouldAccept = { request in
    request.origin == "https://chat.example" ? .accept() : .refuse(statusCode: 403, text: "origin not allowed")
}
let listener = try await WebSocketConnectionListener.bind(configuration: .init(port: 0), options: options)
let server = Task {
    for await connection in listener {
        Task {
            for await message in connection.messages { try await connection.send(message) }
        }
    }
}

// The client.
var configuration = WebSocket.ClientConfiguration()
configuration.headers = [("Origin", "https://chat.example")]
let connection = try await WebSocketConnection.connect(to: "ws://127.0.0.1:\(listener.port)/chat", configuration: configuration)
try await connection.send(.text("hello"))
for await message in connection.messages {
    print(message)  // text("hello")
    break
}
print(await connection.close())  // 1000 (clean)
await listener.close()  // connects are refused from now on; open connections go on
server.cancel()
