extension EventLoop {
    /// This loop's one object of type `Value`, made by `make` on first use and kept as long as the loop:
    /// state that every connection of a loop shares instead of holding its own (the WebSocket keep-alive
    /// timers: one timer per loop, not one per connection). Loop thread only.
    package func loopLocal<Value: AnyObject>(_ make: () -> Value) -> Value {
        assertInEventLoop()
        let key = ObjectIdentifier(Value.self)
        if let value = loopLocals[key] { return unsafeDowncast(value, to: Value.self) }
        let value = make()
        loopLocals[key] = value
        return value
    }

    /// How many timers the loop holds (scheduled, not yet run or cancelled): for tests that check a
    /// per-connection timer does not come back. Loop thread only.
    package var pendingTimerCount: Int {
        assertInEventLoop()
        return timerCount
    }
}
