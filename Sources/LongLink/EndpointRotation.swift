/// Which of a link's endpoints (``LongLinkClient/Configuration/endpoints``) its next connect attempt
/// goes to: the first after ``restart()`` (an app's connect), the next one, round robin, after each
/// ``advance()`` (a failed connect or a drop the link did not ask for). A value type of the link's
/// loop-confined state.
struct EndpointRotation: Sendable {
    let endpoints: [Endpoint]
    private(set) var index = 0

    init(_ endpoints: [Endpoint]) {
        self.endpoints = endpoints
    }

    /// The endpoint of the attempt in progress or next; `nil` when there are none.
    var current: Endpoint? { endpoints.isEmpty ? nil : endpoints[index] }

    /// ``current`` when there is a choice (more than one endpoint) to report in
    /// ``LongLinkClient/Event/reconnecting(attempt:delay:endpoint:)``; `nil` with one or none.
    var announced: Endpoint? { endpoints.count > 1 ? current : nil }

    /// Back to the first endpoint.
    mutating func restart() { index = 0 }

    /// On to the next endpoint, the first again after the last.
    mutating func advance() {
        guard !endpoints.isEmpty else { return }
        index = (index + 1) % endpoints.count
    }
}
