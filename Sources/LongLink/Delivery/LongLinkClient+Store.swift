import AsyncSocket
import Dispatch
import Foundation

/// The driver's calls into the ``DeliveryStateStore``: all on ``LongLinkClient/storeQueue``, never on
/// the loop; what they return goes back to the machine as an input.
extension LongLinkClient {
    /// ``send(_:)`` on a reliable link: the id is taken on the loop, the message numbered, encoded and
    /// persisted on the store queue, and added to the outbox on the loop, before this returns. Sends
    /// go through the store queue one at a time, so ids join the outbox in order.
    func sendReliably(_ message: Codec.Message, _ delivery: ReliableDelivery<Codec.Message>) -> UInt64? {
        storeQueue.sync {
            dispatchPrecondition(condition: .onQueue(storeQueue))
            let next = loop.runAndWait { delivery.nextAdmission }
            let input: LinkInput<Codec>
            var admitted: UInt64?
            switch delivery.prepare(message, id: next.id, outboxFull: next.isFull) {
            case .unnumbered: input = .send(message)
            case .admitted(let id, let frame, let numbered):
                input = .admitted(id: id, frame: frame, message: numbered)
                admitted = id
            case .outboxFull: input = .sendRejected(message, .outboxFull)
            case .encodingFailed(let why): input = .sendRejected(message, .encodingFailed(why))
            case .storeFailed(let why): input = .sendRejected(message, .storeFailed(why))
            }
            loop.runAndWait { [self] in feed(input) }
            return admitted
        }
    }

    /// Brings the store up to date with every flush taken up to `last`, then feeds
    /// ``LinkInput/persisted(_:then:)``. With an event queue the write waits there behind the events
    /// emitted before (so a delivery's position is saved only once the app has handled it, and as soon
    /// as it has) and runs on the store queue; without one (events ran inline on the loop) it is
    /// queued on the store queue.
    func persist(through last: UInt64, then: AfterPersist) {
        guard let delivery else { return }
        let write: @Sendable () -> Void = { [self] in
            dispatchPrecondition(condition: .onQueue(storeQueue))
            let persisted = delivery.persist(through: last)
            loop.execute { [self] in feed(.persisted(persisted, then: then)) }
        }
        if events.queue != nil {
            events.perform { [self] in storeQueue.sync(execute: write) }
        } else {
            storeQueue.async(execute: write)
        }
    }
}
