// swift-tools-version:5.10
// SwiftNIO WebSocket echo peer for scripts/bench-websocket.sh (NIO_WS_BIN). NIO itself is never
// committed here: SwiftPM fetches it (or a local mirror of it, see README.md) at build time.
import PackageDescription

let package = Package(
    name: "swift-nio-websocket",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3"),
    ],
    targets: [
        .executableTarget(
            name: "NIOWebSocketEcho",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
    ]
)
