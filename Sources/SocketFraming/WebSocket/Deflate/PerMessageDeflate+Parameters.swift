extension PerMessageDeflate {
    /// The names of the four parameters RFC 7692 §7.1 defines.
    enum ParameterName: String, CaseIterable {
        case serverNoContextTakeover = "server_no_context_takeover"
        case clientNoContextTakeover = "client_no_context_takeover"
        case serverMaxWindowBits = "server_max_window_bits"
        case clientMaxWindowBits = "client_max_window_bits"
    }

    /// `client_max_window_bits` as an offer may carry it (RFC 7692 §7.1.2.2).
    enum ClientWindowBits: Equatable {
        /// Not in the element.
        case absent
        /// Present without a value (offers only): the client accepts a limit in the response.
        case supported
        /// Present with a value 8–15.
        case bits(Int)
    }

    /// The parameters of one permessage-deflate offer or response, each checked on its own (RFC 7692 §7.1):
    /// known names only, each at most once, values as the parameter's definition requires.
    struct Parameters: Equatable {
        var serverNoContextTakeover = false
        var clientNoContextTakeover = false
        /// `server_max_window_bits`, nil when absent.
        var serverMaxWindowBits: Int?
        var clientMaxWindowBits = ClientWindowBits.absent

        /// Which element is parsed: `client_max_window_bits` needs a value only in a response.
        enum Element { case offer, response }

        /// Reads `parameters` of an `element`; the first fault found, in the parameters' order, is thrown.
        init(_ parameters: [WebSocketExtension.Parameter], in element: Element) throws(NegotiationError) {
            var seen: Set<ParameterName> = []
            for parameter in parameters {
                guard let name = ParameterName(rawValue: parameter.name.lowercased()) else {
                    throw .unknownParameter(name: parameter.name)
                }
                guard seen.insert(name).inserted else { throw .duplicateParameter(name: parameter.name) }
                switch name {
                case .serverNoContextTakeover, .clientNoContextTakeover:
                    if let value = parameter.value { throw .unexpectedValue(parameter: parameter.name, value: value) }
                    if name == .serverNoContextTakeover { serverNoContextTakeover = true } else { clientNoContextTakeover = true }
                case .serverMaxWindowBits:
                    guard let value = parameter.value else { throw .missingValue(parameter: parameter.name) }
                    serverMaxWindowBits = try Self.windowBits(value, of: parameter.name)
                case .clientMaxWindowBits:
                    if let value = parameter.value {
                        clientMaxWindowBits = .bits(try Self.windowBits(value, of: parameter.name))
                    } else if element == .offer {
                        clientMaxWindowBits = .supported
                    } else {
                        throw .missingValue(parameter: parameter.name)
                    }
                }
            }
        }

        /// `value` as window bits: "8" to "15", decimal digits only, no leading zero, no sign or space.
        static func windowBits(_ value: String, of parameter: String) throws(NegotiationError) -> Int {
            let digits = Array(value.utf8)
            guard (1...2).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }), digits[0] != 0x30,
                let bits = Int(value), PerMessageDeflate.windowBitsRange.contains(bits)
            else { throw .invalidWindowBits(parameter: parameter, value: value) }
            return bits
        }
    }
}
