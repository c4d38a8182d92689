// chat-bench: load generator for the chat server (im-server). All logic is in ChatBench.
import ChatBench
import Foundation

exit(ChatBench.main(arguments: Array(CommandLine.arguments.dropFirst())))
