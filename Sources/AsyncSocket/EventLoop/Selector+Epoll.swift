#if os(Linux)
    import CAsyncSocketShims
    import Glibc

    /// Readiness notification with `epoll(7)`, level-triggered, plus an `eventfd(2)` that other threads
    /// write to wake the loop.
    final class Selector {
        private let epollFD: Int32
        private let wakeupFD: Int32
        private var events: UnsafeMutableBufferPointer<epoll_event>
        /// The token that marks the wake-up descriptor's events; never a registration's token.
        private static let wakeupToken = UInt64.max

        init(maxEventsPerWait: Int = 1024) throws(SocketError) {
            epollFD = try Posix.check("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
            do {
                wakeupFD = try Posix.check("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
            } catch {
                Posix.close(epollFD)
                throw error
            }
            events = .allocate(capacity: maxEventsPerWait)
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = Selector.wakeupToken
            _ = epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeupFD, &event)
        }

        deinit {
            events.deallocate()
            Posix.close(wakeupFD)
            Posix.close(epollFD)
        }

        private static func mask(_ interest: SelectorInterest) -> UInt32 {
            var mask: UInt32 = 0
            if interest.contains(.read) { mask |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
            if interest.contains(.write) { mask |= EPOLLOUT.rawValue }
            return mask
        }

        /// Starts watching `fd` (`EPOLL_CTL_ADD`).
        func register(_ fd: Int32, token: UInt64, interest: SelectorInterest) throws(SocketError) {
            try control(EPOLL_CTL_ADD, fd, token: token, interest: interest)
        }

        /// Changes what `fd` is watched for (`EPOLL_CTL_MOD`).
        func reregister(_ fd: Int32, token: UInt64, interest: SelectorInterest) throws(SocketError) {
            try control(EPOLL_CTL_MOD, fd, token: token, interest: interest)
        }

        /// Stops watching `fd` (`EPOLL_CTL_DEL`). Closing the descriptor does the same.
        func deregister(_ fd: Int32) {
            var event = epoll_event()
            _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, &event)
        }

        private func control(_ operation: Int32, _ fd: Int32, token: UInt64, interest: SelectorInterest) throws(SocketError) {
            var event = epoll_event()
            event.events = Selector.mask(interest)
            event.data.u64 = token
            _ = try Posix.check("epoll_ctl") { epoll_ctl(epollFD, operation, fd, &event) }
        }

        /// Waits up to `timeoutNanoseconds` (`nil` = forever, 0 = poll) and calls `body` for each event.
        /// Wake-ups from ``wakeup()`` are consumed here and not passed on.
        func wait(timeoutNanoseconds: UInt64?, _ body: (SelectorEvent) -> Void) throws(SocketError) {
            let timeoutMilliseconds: Int32
            if let nanoseconds = timeoutNanoseconds {
                // Round up, so a timer is never woken for before its deadline.
                timeoutMilliseconds = Int32(clamping: (nanoseconds + 999_999) / 1_000_000)
            } else {
                timeoutMilliseconds = -1
            }
            let count = try Posix.check("epoll_wait") {
                epoll_wait(epollFD, events.baseAddress, Int32(events.count), timeoutMilliseconds)
            }
            let readMask = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue
            let writeMask = EPOLLOUT.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue
            for index in 0..<Int(count) {
                let event = events[index]
                if event.data.u64 == Selector.wakeupToken {
                    var value: UInt64 = 0
                    _ = read(wakeupFD, &value, MemoryLayout<UInt64>.size)
                    continue
                }
                body(
                    SelectorEvent(
                        token: event.data.u64,
                        readable: event.events & readMask != 0,
                        writable: event.events & writeMask != 0
                    ))
            }
        }

        /// Wakes a thread blocked in ``wait(timeoutNanoseconds:_:)``. Safe from any thread.
        func wakeup() {
            var one: UInt64 = 1
            _ = write(wakeupFD, &one, MemoryLayout<UInt64>.size)
        }
    }
#endif
