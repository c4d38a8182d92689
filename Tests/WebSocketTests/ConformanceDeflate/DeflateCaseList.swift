import SocketFraming

/// One payload size of Autobahn's `MSG_SIZES` (`case12_x_x.py`): case 12.g.i / 13.g.i is size `i`
/// (1-based) of this list in subcategory `g`.
struct DeflateMessageSize: Sendable, CustomStringConvertible {
    /// Payload length: characters for text, bytes for binary.
    let length: Int
    /// Autobahn's `autoFragmentSize`: the sender cuts the compressed payload into frames of this many
    /// bytes; 0 sends each message as one frame.
    let fragmentSize: Int

    var description: String { fragmentSize == 0 ? "\(length)" : "\(length)/frag \(fragmentSize)" }

    /// Autobahn's 18 sizes in its order.
    static let autobahn: [DeflateMessageSize] =
        [16, 64, 256, 1024, 4096, 8192, 16384, 32768, 65536, 131_072].map { DeflateMessageSize(length: $0, fragmentSize: 0) }
        + [8192, 16384, 32768, 65536, 131_072].map { DeflateMessageSize(length: $0, fragmentSize: 256) }
        + [1024, 4096, 32768].map { DeflateMessageSize(length: 131_072, fragmentSize: $0) }

    /// Messages sent at this size, scaled down from Autobahn's 1000 so that the whole group stays within
    /// ~15 s on a loaded 2-core machine: `budget` bytes of payload per case, at least 2 messages (so
    /// context takeover from one message to the next is exercised) and at most `cap`.
    func count(budget: Int, cap: Int) -> Int { min(cap, max(2, budget / length)) }
}

/// One of Autobahn's 13.x parameter sets (`DEFLATE_PARAMS`): what the client offers, what Autobahn's
/// server accepts with, and what ours does.
///
/// Autobahn's `PerMessageDeflateOffer()` always carries `client_no_context_takeover` and
/// `client_max_window_bits` (its `accept_*` flags default true); `request_no_context_takeover` and
/// `request_max_window_bits` add `server_no_context_takeover` and `server_max_window_bits=N`. Its
/// server accept adds `client_no_context_takeover` and `client_max_window_bits=N` when it requests them.
struct DeflateParameterCase: Sendable, CustomStringConvertible {
    /// 1…7: case 13.`group`.x.
    let group: Int
    /// Autobahn's offers, in order, as header elements (joined by ", " in the request).
    let offers: [String]
    /// Autobahn's server answer (`PerMessageDeflateOfferAccept.get_extension_string`) to the first offer.
    let autobahnResponse: String
    /// Our listener's configuration playing Autobahn's accept function.
    let server: PerMessageDeflate.ServerConfiguration
    /// Our listener's answer to `offers` with `server`.
    let ourResponse: String
    /// Our client's configuration closest to the first offer (15 is never sent as `server_max_window_bits`).
    let client: PerMessageDeflate.ClientConfiguration

    var description: String { "13.\(group)" }

    /// What the offer of `client` agrees with `response` (RFC 7692 §7.1): the client's own
    /// `client_no_context_takeover` hint binds it whether or not the response repeats it.
    func agreement(forResponse response: String) -> PerMessageDeflate.Agreement {
        let parameters = Set(response.split(separator: "; ").dropFirst().map(String.init))
        func bits(_ name: String) -> Int {
            parameters.first { $0.hasPrefix(name + "=") }.flatMap { Int($0.dropFirst(name.count + 1)) } ?? 15
        }
        return PerMessageDeflate.Agreement(
            serverNoContextTakeover: parameters.contains("server_no_context_takeover"),
            clientNoContextTakeover: true, serverMaxWindowBits: bits("server_max_window_bits"),
            clientMaxWindowBits: bits("client_max_window_bits"))
    }

    private static let base = "permessage-deflate; client_no_context_takeover; client_max_window_bits"

    static let all: [DeflateParameterCase] = [
        DeflateParameterCase(
            group: 1, offers: [base], autobahnResponse: "permessage-deflate",
            server: .init(serverNoContextTakeover: false, clientNoContextTakeover: false, clientMaxWindowBits: 15),
            ourResponse: "permessage-deflate; client_no_context_takeover",
            client: .init(requestClientNoContextTakeover: true)),
        DeflateParameterCase(
            group: 2, offers: [base + "; server_no_context_takeover"],
            autobahnResponse: "permessage-deflate; server_no_context_takeover; client_no_context_takeover",
            server: .init(serverNoContextTakeover: false, clientNoContextTakeover: true, clientMaxWindowBits: 15),
            ourResponse: "permessage-deflate; server_no_context_takeover; client_no_context_takeover",
            client: .init(requestServerNoContextTakeover: true, requestClientNoContextTakeover: true)),
        DeflateParameterCase(
            group: 3, offers: [base + "; server_max_window_bits=9"],
            autobahnResponse: "permessage-deflate; server_max_window_bits=9; client_max_window_bits=9",
            server: .init(serverNoContextTakeover: false, clientNoContextTakeover: false, clientMaxWindowBits: 9),
            ourResponse: "permessage-deflate; client_no_context_takeover; server_max_window_bits=9; client_max_window_bits=9",
            client: .init(requestClientNoContextTakeover: true, serverMaxWindowBits: 9)),
        DeflateParameterCase(
            group: 4, offers: [base + "; server_max_window_bits=15"],
            autobahnResponse: "permessage-deflate; server_max_window_bits=15; client_max_window_bits=15",
            server: .init(serverNoContextTakeover: false, clientNoContextTakeover: false, clientMaxWindowBits: 15),
            ourResponse: "permessage-deflate; client_no_context_takeover; server_max_window_bits=15",
            client: .init(requestClientNoContextTakeover: true)),
        DeflateParameterCase(
            group: 5, offers: [base + "; server_no_context_takeover; server_max_window_bits=9"],
            autobahnResponse:
                "permessage-deflate; server_no_context_takeover; server_max_window_bits=9; client_no_context_takeover; client_max_window_bits=9",
            server: .init(serverNoContextTakeover: false, clientNoContextTakeover: true, clientMaxWindowBits: 9),
            ourResponse:
                "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=9; client_max_window_bits=9",
            client: .init(requestServerNoContextTakeover: true, requestClientNoContextTakeover: true, serverMaxWindowBits: 9)),
        DeflateParameterCase(
            group: 6, offers: [base + "; server_no_context_takeover; server_max_window_bits=15"],
            autobahnResponse:
                "permessage-deflate; server_no_context_takeover; server_max_window_bits=15; client_no_context_takeover; client_max_window_bits=15",
            server: .init(serverNoContextTakeover: false, clientNoContextTakeover: true, clientMaxWindowBits: 15),
            ourResponse: "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=15",
            client: .init(requestServerNoContextTakeover: true, requestClientNoContextTakeover: true)),
        DeflateParameterCase(
            group: 7,
            offers: [base + "; server_no_context_takeover; server_max_window_bits=9", base + "; server_no_context_takeover", base],
            autobahnResponse:
                "permessage-deflate; server_no_context_takeover; server_max_window_bits=9; client_no_context_takeover; client_max_window_bits=9",
            server: .init(serverNoContextTakeover: false, clientNoContextTakeover: true, clientMaxWindowBits: 9),
            ourResponse:
                "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=9; client_max_window_bits=9",
            client: .init(requestServerNoContextTakeover: true, requestClientNoContextTakeover: true, serverMaxWindowBits: 9))
    ]
}
