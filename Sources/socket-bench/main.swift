// socket-bench: LP4 / raw echo servers and load-generating clients. All logic is in SocketBench.
import Foundation
import SocketBench

exit(SocketBench.main(arguments: Array(CommandLine.arguments.dropFirst())))
