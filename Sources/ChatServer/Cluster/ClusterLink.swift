import AsyncSocket
import CSodium
import Dispatch
import Foundation
import NATSClient
import SocketLog

/// The routing queue's side of a ``ChatCluster``: what the other nodes say, handed to the ``Router``
/// on its queue, and what this node tells them, sent from a queue of its own (so neither the routing
/// queue nor an event loop waits for NATS). Unchecked: ``remote`` and ``router`` are used on the
/// routing queue only; everything else is immutable after `init`.
///
/// The router is held weakly: a NATS callback or a timer may have queued work on the routing queue or
/// the outbox just before ``stop(removingPresence:users:)``, and that work runs after the server, and
/// its router, are gone; it then does nothing. (It was `unowned`: "Attempted to read an unowned
/// reference but object … was already destroyed", once in 100 failover runs.)
final class ClusterLink: @unchecked Sendable {
    let cluster: ChatCluster
    private(set) weak var router: Router?
    /// The router's queue (the routing queue).
    let queue: DispatchQueue
    /// The router's logger.
    let logger: Logger
    /// Where this node's NATS calls run, one at a time, in order.
    let outbox = DispatchQueue(label: "IMChat.ChatCluster.outbox")
    /// Users online on other nodes: name → their node and resume token's hash (routing queue only),
    /// each in 40 bytes without a heap block of its own (``RemoteUser``: the entry a node keeps for
    /// every user of every other node).
    var remote: [String: RemoteUser] = [:]
    /// The nodes of the users in ``remote`` (routing queue), each with the ``RemoteUser/Origin`` its
    /// users' entries share: a node refresh scans ``remote`` only when one of them is no longer live.
    private var remoteNodes: [String: RemoteUser.Origin] = [:]
    /// Users whose login or logout this node could not write to the presence bucket (NATS away or
    /// failing): written again at the next node refresh, or by ``resync()`` (outbox queue only).
    var unsynced: Set<String> = []
    private let subscriptions = LockedValue<[NATSSubscription]>([])
    private let watch = LockedValue<KeyValueWatch?>(nil)
    private let timer = LockedValue<DispatchSourceTimer?>(nil)
    private let stopped = LockedValue(false)
    var nodeID: String { cluster.nodeID }
    var prefix: String { cluster.configuration.prefix }

    /// A value of the presence bucket: the node a user is on, and the SHA-256 (lowercase hex) of the
    /// session's resume token.
    struct Presence: Codable, Equatable {
        var node: String
        var token: String
    }

    /// What nodes send each other on `PREFIX.node.NODE` and `PREFIX.receipt`.
    struct Notice: Codable {
        /// Close this user's session: it logged in on another node.
        var replace: String?
        /// A read receipt: conversation, up to, by.
        var conversation: String?, upTo: UInt64?, by: String?
    }

    /// The presence values' and notices' encoder (outbox queue), made once.
    private let encoder = JSONEncoder()
    /// Logins (a token hash) and logouts (nil) on their way to the presence bucket: written in
    /// batches on the outbox, 5 ms after the first of each (at a failover a survivor takes thousands
    /// of users in seconds, and a round trip each kept the outbox behind).
    /// Set by `init`, never changed after.
    private var announcements: ChangeBatch<(name: String, token: String?)>?

    init(cluster: ChatCluster, router: Router) {
        self.cluster = cluster
        self.router = router
        queue = router.queue
        logger = router.logger
        announcements = ChangeBatch(queue: outbox, delay: .milliseconds(5)) { [weak self] changes in self?.write(changes) }
    }

    /// Subscribes to the message stream, this node's subject, receipts and presence, and starts writing
    /// this node's key. Blocks for NATS's answers (call it before the server listens).
    /// - Throws: ``NATSError``.
    func start() throws {
        let queue = queue
        let jetStream = try cluster.connection.jetStream()
        let stored = try jetStream.subscribeNew(filter: "\(prefix).msg.>") { [weak self] message in
            guard let self, let (conversation, sequence) = self.cluster.store.parse(message.subject),
                let record = try? JetStreamRecord.Message.decode(message.data), record.o != self.nodeID
            else { return }
            let stored = record.stored(in: conversation, sequence: sequence)
            queue.async {
                self.logger.trace(
                    "path: \(conversation)#\(sequence) from \(stored.sender) stored by \(record.o ?? "an unnamed node"), from the stream")
                self.router?.fanOut(stored)
            }
        }
        let notices = try cluster.connection.subscribe("\(prefix).node.\(nodeID)") { [weak self] message in
            guard let self, let notice = try? JSONDecoder().decode(Notice.self, from: message.data), let name = notice.replace else {
                return
            }
            queue.async { self.router?.replacedElsewhere(name) }
        }
        let receipts = try cluster.connection.subscribe("\(prefix).receipt") { [weak self] message in
            guard let self, let notice = try? JSONDecoder().decode(Notice.self, from: message.data),
                let conversation = notice.conversation, let upTo = notice.upTo, let by = notice.by
            else { return }
            queue.async { self.router?.deliverReceipt(conversation, upTo: upTo, by: by) }
        }
        subscriptions.withLock { $0 = [stored, notices, receipts] }
        let decoder = JSONDecoder()  // one for the watch's thread, not one per change
        let changes = ChangeBatch<(String, Presence?)>(queue: queue, delay: .milliseconds(5)) { [weak self] changes in
            for (name, value) in changes { self?.presenceChanged(name, value) }
        }
        let presenceWatch = try cluster.presence.watchAll { change in
            switch change {
            case .put(let entry):
                guard let name = KeyValueBucket.decodeKey(entry.key),
                    let value = try? decoder.decode(Presence.self, from: entry.value)
                else { return }
                changes.add((name, value))
            case .delete(let key, _):
                guard let name = KeyValueBucket.decodeKey(key) else { return }
                changes.add((name, nil))
            case .initialValuesDone:
                break
            }
        }
        watch.withLock { $0 = presenceWatch }
        let beat = DispatchSource.makeTimerSource(queue: outbox)
        let refresh = Router.dispatchInterval(ChatCluster.nodeRefresh)
        beat.schedule(deadline: .now(), repeating: refresh)
        beat.setEventHandler { [weak self] in self?.refreshNode() }
        beat.resume()
        timer.withLock { $0 = beat }
    }

    /// Stops listening to the other nodes and, unless `keepPresence`, removes this node's users and
    /// key from the buckets (a graceful shutdown). Waits for the outbox.
    func stop(removingPresence: Bool, users: [String]) {
        stopped.withLock { $0 = true }
        timer.withLock {
            $0?.cancel(); $0 = nil
        }
        watch.withLock {
            $0?.stop(); $0 = nil
        }
        for subscription in subscriptions.withLock({ $0 }) { subscription.unsubscribe() }
        guard removingPresence else { return }
        outbox.sync {
            // Logins announced in the last 5 ms are written first, so that the removal comes after them.
            write(announcements?.takeAll() ?? [])
            // Without NATS each call would wait for its timeout (2 s): a shutdown with 10,000 users
            // would take hours. The others then see them offline when this node's key expires.
            do {
                for name in users where cluster.isConnected { try removePresence(of: name) }
                if cluster.isConnected { try cluster.nodes.delete(nodeID) }
            } catch {
                logger.warning("cluster: cannot remove this node's users from presence: \(error)")
            }
        }
    }

    // MARK: Presence (routing queue)

    /// A user logged in here: the others hear of it from the bucket.
    func announceLogin(_ name: String, resumeToken: String) {
        remote[name] = nil
        announcements?.add((name, Self.hash(resumeToken)))
    }

    /// A user's session here ended: removed from the bucket unless another node has it now.
    func announceLogout(_ name: String) {
        announcements?.add((name, nil))
    }

    /// Writes a batch of logins (a token hash) and logouts (nil), in order (outbox queue): the logins
    /// between two logouts as one batch of puts (one round trip), each logout as ``write(_:token:)``.
    private func write(_ changes: [(name: String, token: String?)]) {
        var logins: [(name: String, token: String)] = []
        for (name, token) in changes {
            if let token {
                logins.append((name, token))
            } else {
                writeOnline(logins)
                logins.removeAll()
                write(name, token: nil)
            }
        }
        writeOnline(logins)
    }

    /// Writes `logins` online here in one batch of puts; each one NATS did not take waits in
    /// ``unsynced`` for the next node refresh (outbox queue).
    private func writeOnline(_ logins: [(name: String, token: String)]) {
        guard logins.count > 1, cluster.isConnected else {
            for (name, token) in logins { write(name, token: token) }
            return
        }
        do {
            let requests = try logins.map { name, token in
                try cluster.presence.putRequest(
                    for: JetStreamMessageStore.key(name), try encoder.encode(Presence(node: nodeID, token: token)))
            }
            let answers = try cluster.store.batcher.requests(requests, timeout: cluster.presence.jetStream.timeout)
            for ((name, _), answer) in zip(logins, answers) {
                do {
                    _ = try JetStream.publishAck(from: answer)
                } catch {
                    unsynced.insert(name)
                    logger.error("cluster: cannot record \(name) online: \(error)")
                }
            }
        } catch {
            unsynced.formUnion(logins.map(\.name))
            logger.error("cluster: cannot record \(logins.count) users online: \(error)")
        }
    }

    /// Writes `name` online here with `token` (its hash), or removes it (nil), in the presence bucket;
    /// when NATS is away (each call would wait for its timeout, and the outbox with it) or the write
    /// fails, `name` waits in ``unsynced`` for the next node refresh (outbox queue).
    private func write(_ name: String, token: String?) {
        guard cluster.isConnected else {
            unsynced.insert(name)
            return
        }
        do {
            if let token {
                let value = Presence(node: nodeID, token: token)
                _ = try cluster.presence.put(JetStreamMessageStore.key(name), try encoder.encode(value))
            } else {
                try removePresence(of: name)
            }
        } catch {
            unsynced.insert(name)
            logger.error("cluster: cannot record \(name) \(token == nil ? "offline" : "online"): \(error)")
        }
    }

    /// NATS is back (any thread): this node's key and every user logged in here are written again,
    /// and the logouts NATS missed are removed, each user as it is here at this moment. Without it a
    /// user who logged out during the outage stayed online on the other nodes while this node lived;
    /// and after an outage longer than ``ChatCluster/nodeLifetime`` a node that came back first took
    /// this node for dead and removed its users from the bucket for good.
    func resync() {
        outbox.async { [self] in writeAgain(everyone: true) }
    }

    /// Writes the users in ``unsynced`` again, each as it is here at this moment; with `everyone`, also
    /// this node's key and every user logged in here (outbox queue). The state is taken on the routing
    /// queue, so what the router does later is written after this, in order.
    private func writeAgain(everyone: Bool) {
        let missed = unsynced
        unsynced.removeAll()
        guard !stopped.withLock({ $0 }), everyone || !missed.isEmpty else { return }
        queue.async { [self] in
            guard let router else { return }
            let here = router.users.mapValues { Self.hash($0.resumeToken) }
            outbox.async { [self] in
                if everyone { _ = try? cluster.nodes.put(nodeID, Data("alive".utf8)) }  // before its users: see dropUsers
                let online = everyone ? here : here.filter { missed.contains($0.key) }
                let gone = missed.filter { here[$0] == nil }
                for (name, token) in online { write(name, token: token) }
                for name in gone { write(name, token: nil) }
                let why = everyone ? "NATS is back" : "presence written again"
                logger.notice("cluster: \(why): \(online.count) users here written, \(gone.count) who left removed")
            }
        }
    }

    /// Deletes `name`'s presence key if it is this node's (outbox queue).
    private func removePresence(of name: String) throws {
        let key = JetStreamMessageStore.key(name)
        guard let entry = try cluster.presence.get(key),
            let value = try? JSONDecoder().decode(Presence.self, from: entry.value), value.node == nodeID
        else { return }
        try cluster.presence.delete(key)
    }

    /// The bucket says `name` is on `value`'s node now, or (nil) nowhere.
    private func presenceChanged(_ name: String, _ value: Presence?) {
        guard let router else { return }
        logger.debug(
            "cluster: presence bucket says \(name) is \(value.map { "on \($0.node)" } ?? "offline") (here: \(router.presence.board.contains(name) ? "online" : "offline"), event \(router.presence.board.event))"
        )
        if let value, value.node != nodeID {
            let wasOnline = router.presence.board.contains(name)
            let origin = remoteNodes[value.node] ?? RemoteUser.Origin(node: value.node)
            remoteNodes[value.node] = origin
            remote[name] = RemoteUser(value, shared: origin)
            if !wasOnline { router.sendPresence(of: name, online: true) }
        } else if value == nil, remote.removeValue(forKey: name) != nil, router.users[name] == nil, router.presence.board.contains(name) {
            router.sendPresence(of: name, online: false)
        }
    }

    /// Writes this node's key, writes again the users whose last write failed while NATS was connected
    /// (a timeout under load; otherwise only a reconnect would have written them, and the other nodes
    /// would not have seen them online for as long as this node stayed connected), and takes the users
    /// of nodes whose key expired offline (outbox queue).
    private func refreshNode() {
        do {
            _ = try cluster.nodes.put(nodeID, Data("alive".utf8))
            let live = Set(try cluster.nodes.keys())
            queue.async { [self] in suspectNodes(notIn: live) }
        } catch {
            logger.warning("cluster: cannot reach NATS: \(error)")
            return
        }
        writeAgain(everyone: false)
    }

    /// The nodes of users in ``remote`` that are not in the listing `live` are checked one by one with
    /// a read of their key, and only those whose key is gone are taken for dead (routing queue). A
    /// listing of the bucket is a consumer's walk over it, not one read; a node taken for dead while
    /// its key was there lost its users here for good, since nothing would announce them again.
    func suspectNodes(notIn live: Set<String>) {
        logger.debug("cluster: live nodes \(live.sorted()), users' nodes \(remoteNodes.keys.sorted())")
        let suspects = Set(remoteNodes.keys).subtracting(live)
        guard !suspects.isEmpty else { return }
        outbox.async { [self] in
            let dead = suspects.filter { node in
                guard case .some(.none) = try? cluster.nodes.get(node) else {
                    logger.notice("cluster: node \(node) was not listed, but its key is there (or cannot be read): not taken for dead")
                    return false
                }
                return true
            }
            guard !dead.isEmpty else { return }
            queue.async { [self] in dropUsers(of: dead, live: live) }
        }
    }

    /// The users of the `dead` nodes go offline here; the first `live` node (by id) also removes them
    /// from the bucket (routing queue). One node does it, with one check per dead node: when a node of
    /// 16,668 users died at 100,000 users, every survivor checking and deleting every key (three NATS
    /// round trips a user, five times over) kept NATS busy while those users were logging in again.
    private func dropUsers(of dead: Set<String>, live: Set<String>) {
        guard let router else { return }
        for node in dead { remoteNodes[node] = nil }
        let gone = remote.filter { dead.contains($0.value.node) }
        for name in gone.keys {
            remote[name] = nil
            if router.users[name] == nil { router.sendPresence(of: name, online: false) }
        }
        logger.notice("cluster: \(gone.count) users of nodes gone (\(dead.sorted().joined(separator: ", "))) are offline")
        guard live.min() == nodeID, !gone.isEmpty else { return }
        outbox.async { [self] in
            for node in dead {
                // Not if its node is back meanwhile: after an outage, it writes its key, then its users.
                guard case .some(.none) = try? cluster.nodes.get(node) else { continue }
                removeFromBucket(gone.filter { $0.value.node == node })
            }
        }
    }

    /// Deletes each of `users`' presence keys that still says what `users` has (the dead node and its
    /// token): most of a dead node's users are logging in again elsewhere meanwhile, and their keys
    /// say so (outbox queue). One key at a time, each read right before its delete. Reading them in
    /// batches of 500 (tried at stop 47) left up to a second between a read and its delete, in which a
    /// user just logged in again elsewhere could lose its new key (and show offline on the other
    /// nodes); and, done in seconds, it deleted the key of every user not back yet in the middle of the
    /// re-login storm (docs/BENCHMARKS.md, "Stop 47"). One decoder for them all, not one per user.
    func removeFromBucket(_ users: [String: RemoteUser]) {
        let decoder = JSONDecoder()
        for (name, value) in users {
            let key = JetStreamMessageStore.key(name)
            if let entry = try? cluster.presence.get(key), let now = try? decoder.decode(Presence.self, from: entry.value),
                value.matches(now)
            {
                try? cluster.presence.delete(key)
            }
        }
    }

    // MARK: Sessions and receipts (routing queue)

    /// Tells `node` to close `name`'s session there: it logged in here.
    func replace(_ name: String, on node: String) {
        remote[name] = nil
        publish("\(prefix).node.\(node)", Notice(replace: name))
    }

    /// A receipt for a reader who is not on this node.
    func sendReceipt(_ conversation: String, upTo: UInt64, by name: String) {
        publish("\(prefix).receipt", Notice(conversation: conversation, upTo: upTo, by: name))
    }

    private func publish(_ subject: String, _ notice: Notice) {
        outbox.async { [self] in
            do {
                try cluster.connection.publish(subject, try encoder.encode(notice))
            } catch {
                logger.error("cluster: cannot send to \(subject): \(error)")
            }
        }
    }

    /// SHA-256 of `token`, lowercase hex (libsodium's `crypto_hash_sha256`), written as
    /// ``RemoteUser/TokenHash`` writes its bits (one hex encoder for both directions; not
    /// `String(format:)` per byte, 32 calls a login).
    static func hash(_ token: String) -> String {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        let bytes = Array(token.utf8)
        _ = crypto_hash_sha256(&digest, bytes, UInt64(bytes.count))
        func word(_ index: Int) -> UInt64 { digest[index * 8..<index * 8 + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        return RemoteUser.TokenHash.sha256(word(0), word(1), word(2), word(3)).string
    }
}
