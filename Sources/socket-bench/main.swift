// socket-bench: LP4 / raw / UDP echo servers, load-generating clients, and the chat load generator.
// All logic is in SocketBench and ChatBench.
import ChatBench
import Foundation
import SocketBench

let chat = SocketBench.ChatCommands(client: { ChatBench.main(arguments: $0) }, storeSize: { ChatBench.storeSize(arguments: $0) })
exit(SocketBench.main(arguments: Array(CommandLine.arguments.dropFirst()), chat: chat))
