import Foundation

extension TCPSocket {
    // Timeouts run from when a request becomes the current one (for one queued after startTLS: once
    // the handshake is done). On expiry the delegate may extend them
    // (GCDAsyncSocket's shouldTimeoutReadWithTag / shouldTimeoutWriteWithTag); otherwise the socket
    // disconnects with a timeout error carrying the tag.

    /// Starts the timeout of the current read if it has one and it is not running yet.
    func armReadTimer(_ connection: ConnectionState) {
        // A read queued after startTLS is not current before the handshake is done (GCDAsyncSocket's
        // TLS packet holds the queue): its time starts then.
        let head = connection.readQueue.withFirst { (id: $0.id, timeout: $0.timeout) }.flatMap {
            waitsForTLS(connection, id: $0.id) ? nil : $0
        }
        connection.readTimeout.follow(head?.id, timeout: head?.timeout ?? -1) {
            let deadline = eventLoop.now() &+ Duration.seconds(head?.timeout ?? 0).nanosecondsClamped
            return (readTimer(at: deadline, id: head?.id ?? 0), deadline)
        }
    }

    private func readTimer(at deadline: UInt64, id: UInt64) -> Scheduled {
        eventLoop.scheduleTask(atNanoseconds: deadline) { [self] in readTimedOut(id) }
    }

    private func readTimedOut(_ id: UInt64) {
        guard case .connected(let connection) = lifecycle, let head = connection.readQueue.first, head.id == id else { return }
        let (tag, elapsed, done) = (head.tag, head.timeout + head.extensions, UInt(head.bytesDone(unread: connection.buffer.count)))
        guard !head.isHandlerRead else {
            // A handler read (``TCPConnection``) has no delegate to ask.
            close(error: .readTimeout(tag: tag))
            return
        }
        askForExtension({ [self] in $0.socket(self, shouldTimeoutReadWithTag: tag, elapsed: elapsed, bytesDone: done) }) { [self] extra in
            guard isCurrent(connection), connection.readQueue.first?.id == id else { return }
            guard extra > 0 else {
                close(error: .readTimeout(tag: tag))
                return
            }
            connection.readQueue.updateFirst { $0.extensions += extra }
            connection.readTimeout.extend(by: extra) { readTimer(at: $0, id: id) }
        }
    }

    /// Starts the timeout of the current write if it has one and it is not running yet.
    func armWriteTimer(_ connection: ConnectionState) {
        let head = connection.writeQueue.withFirst { (id: $0.id, timeout: $0.timeout) }.flatMap {
            waitsForTLS(connection, id: $0.id) ? nil : $0
        }
        connection.writeTimeout.follow(head?.id, timeout: head?.timeout ?? -1) {
            let deadline = eventLoop.now() &+ Duration.seconds(head?.timeout ?? 0).nanosecondsClamped
            return (writeTimer(at: deadline, id: head?.id ?? 0), deadline)
        }
    }

    private func writeTimer(at deadline: UInt64, id: UInt64) -> Scheduled {
        eventLoop.scheduleTask(atNanoseconds: deadline) { [self] in writeTimedOut(id) }
    }

    private func writeTimedOut(_ id: UInt64) {
        guard case .connected(let connection) = lifecycle, let head = connection.writeQueue.first, head.id == id else { return }
        let (tag, elapsed, done) = (head.tag, head.timeout + head.extensions, UInt(head.sent))
        askForExtension({ [self] in $0.socket(self, shouldTimeoutWriteWithTag: tag, elapsed: elapsed, bytesDone: done) }) { [self] extra in
            guard isCurrent(connection), connection.writeQueue.first?.id == id else { return }
            guard extra > 0 else {
                close(error: .writeTimeout(tag: tag))
                return
            }
            connection.writeQueue.updateFirst { $0.extensions += extra }
            connection.writeTimeout.extend(by: extra) { writeTimer(at: $0, id: id) }
        }
    }
}
