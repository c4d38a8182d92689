@testable import ChatServer
import Testing

/// The entry a cluster node keeps for each user of another node (issue 35 §2, the cluster figure).
@Suite struct RemoteUserTests {
    /// SHA-256 of "abc" (FIPS 180-2, appendix B.1), as ``ClusterLink/hash(_:)`` writes it.
    static let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

    @Test func aTokenHashIsKeptAsItsBitsAndGivenBackUnchanged() {
        #expect(ClusterLink.hash("abc") == Self.abc)
        let hash = RemoteUser.TokenHash(Self.abc)
        #expect(hash == .sha256(0xBA78_16BF_8F01_CFEA, 0x4141_40DE_5DAE_2223, 0xB003_61A3_9617_7A9C, 0xB410_FF61_F200_15AD))
        #expect(hash.string == Self.abc)
        let zeros = String(repeating: "0", count: 64)
        #expect(RemoteUser.TokenHash(zeros) == .sha256(0, 0, 0, 0))
        #expect(RemoteUser.TokenHash(zeros).string == zeros)
        let ones = String(repeating: "f", count: 64)
        #expect(RemoteUser.TokenHash(ones) == .sha256(.max, .max, .max, .max))
        #expect(RemoteUser.TokenHash(ones).string == ones)
        let made = ClusterLink.hash("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")
        #expect(RemoteUser.TokenHash(made).string == made)
        guard case .sha256 = RemoteUser.TokenHash(made) else {
            Issue.record("\(made) was not kept as its bits")
            return
        }
    }

    /// Another case, another length or another character: kept as the text it was, so that it equals
    /// only itself, exactly as the `String` did.
    @Test func anyOtherTextIsKeptAsItWasAndEqualsOnlyItself() {
        let others = [
            Self.abc.uppercased(),  // uppercase
            String(Self.abc.dropLast()),  // 63 digits
            Self.abc + "0",  // 65 digits
            String(Self.abc.dropLast()) + "g",  // not a digit
            String(Self.abc.dropLast()) + "é",  // 64 characters, 65 bytes
            "", "tb", "not a hash"
        ]
        for text in others {
            #expect(RemoteUser.TokenHash(text) == .text(text), "\(text)")
            #expect(RemoteUser.TokenHash(text).string == text)
            #expect(RemoteUser.TokenHash(text) != RemoteUser.TokenHash(Self.abc))
        }
    }

    @Test func anEntryGivesBackItsNodeAndTokenAndMatchesOnlyItsOwnValue() {
        let value = ClusterLink.Presence(node: "n2", token: Self.abc)
        let user = RemoteUser(value)
        #expect(user.node == "n2")
        #expect(user.token == Self.abc)
        #expect(user.matches(value))
        #expect(!user.matches(ClusterLink.Presence(node: "n3", token: Self.abc)))
        #expect(!user.matches(ClusterLink.Presence(node: "n2", token: Self.abc.uppercased())))
        #expect(!user.matches(ClusterLink.Presence(node: "n2", token: ClusterLink.hash("abd"))))
        let odd = RemoteUser(ClusterLink.Presence(node: "n2", token: "tb"))
        #expect(odd.token == "tb")
        #expect(odd.matches(ClusterLink.Presence(node: "n2", token: "tb")))
        #expect(!odd.matches(ClusterLink.Presence(node: "n2", token: "tc")))
    }

    /// The users of one node share its ``RemoteUser/Origin``; a token kept as text has one of its own, and
    /// an origin of another node is not used.
    @Test func entriesShareTheirNodesOriginUnlessTheirTokenIsText() {
        let n2 = RemoteUser.Origin(node: "n2")
        let first = RemoteUser(ClusterLink.Presence(node: "n2", token: Self.abc), shared: n2)
        let second = RemoteUser(ClusterLink.Presence(node: "n2", token: ClusterLink.hash("abd")), shared: n2)
        #expect(first.shares(n2) && second.shares(n2))
        #expect(first != second)
        #expect(second.token == ClusterLink.hash("abd"))
        let odd = RemoteUser(ClusterLink.Presence(node: "n2", token: "tb"), shared: n2)
        #expect(!odd.shares(n2))
        #expect(odd.node == "n2" && odd.token == "tb")
        let elsewhere = RemoteUser(ClusterLink.Presence(node: "n3", token: Self.abc), shared: n2)
        #expect(!elsewhere.shares(n2))
        #expect(elsewhere.node == "n3" && elsewhere.token == Self.abc)
        #expect(elsewhere != first)
        // Equal by node and token text, shared or not.
        #expect(RemoteUser(ClusterLink.Presence(node: "n2", token: Self.abc)) == first)
    }

    /// Regression (issue 35 §2): the entry held the hash as 64 characters of text, a heap block of 112
    /// bytes for every user of every other node, and 32 bytes in the dictionary; now no block of its own
    /// and 40 bytes inline.
    @Test func anEntryIsSmallAndInline() {
        #expect(MemoryLayout<RemoteUser>.stride == 40, "\(MemoryLayout<RemoteUser>.stride)")
    }
}
