import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

@testable import YonaConfig
@testable import YonaPush

/// A local stand-in for Apple's push service, written from Apple's "Sending notification requests to APNs" and
/// "Establishing a token-based connection to APNs": HTTP/2 frames over TLS (ALPN h2), `POST /3/device/{token}` with
/// the provider token (an ES256 JWT: `alg` ES256, `kid` the key id, `iss` the team, `iat` within the hour) verified
/// with the key's public half, the headers and the payload checked, the request's `apns-id` echoed, and 200 answered
/// with HEADERS alone, as Apple does. It reads `:authority` or `host` (aioapns sends the latter). Errors by the device
/// token's first four hex digits: `dead` 410 Unregistered, `bad0` 400 BadDeviceToken, `5e5e` 503 with Retry-After 7,
/// `face` 429 TooManyRequests with Retry-After 30, `e7e0` ExpiredProviderToken always (Apple's clock far ahead),
/// `e7e7` ExpiredProviderToken for a provider token issued over 20 minutes ago.
final class APNsEmulator: Sendable {
    struct State {
        /// Accepted payloads by device token.
        var received: [String: [Data]] = [:]
        /// The `apns-collapse-id` of each accepted push, by device token.
        var collapseIDs: [String: [String]] = [:]
        /// Every provider token seen.
        var providerTokens: Set<String> = []
        /// What failed a check (a refusal alone does not say which check).
        var problems: [String] = []
        var requests = 0
    }

    static let keyID = "KEY1234567"
    static let teamID = "TEAM123456"
    static let topic = "nu.yona.app"

    let channel: any Channel
    let baseURL: String
    let ca: FCMEmulator.TestCA
    /// The `.p8` key the server signs with (PKCS#8 PEM, as Apple issues it).
    let keyPEM: String
    let publicKey: P256.Signing.PublicKey
    let state = NIOLockedValueBox(State())

    private init(channel: any Channel, ca: FCMEmulator.TestCA, key: P256.Signing.PrivateKey) {
        self.channel = channel
        self.baseURL = "https://127.0.0.1:\(channel.localAddress!.port!)"
        self.ca = ca
        self.keyPEM = key.pemRepresentation
        self.publicKey = key.publicKey
    }

    static func start() async throws -> APNsEmulator {
        let ca = try FCMEmulator.TestCA.make()
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(ca.certificate).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: ca.key, format: .pem)))
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let box = NIOLockedValueBox<APNsEmulator?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    channel.configureHTTP2Pipeline(
                        mode: .server,
                        inboundStreamInitializer: { stream in
                            stream.eventLoop.makeCompletedFuture {
                                try stream.pipeline.syncOperations.addHandler(Stream(emulator: box.withLockedValue { $0! }))
                            }
                        }
                    ).map { _ in }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let emulator = APNsEmulator(channel: channel, ca: ca, key: P256.Signing.PrivateKey())
        box.withLockedValue { $0 = emulator }
        return emulator
    }

    func stop() async {
        try? await channel.close()
    }

    var settings: APNsSettings {
        APNsSettings(
            keyPEM: keyPEM, keyID: Self.keyID, teamID: Self.teamID, topic: Self.topic, url: baseURL,
            trustRootsPEM: try? String(contentsOfFile: ca.root, encoding: .utf8))
    }

    /// Points a test server's APNs provider at this emulator.
    func configure(workers: Bool) -> (inout AppConfig) -> Void {
        let settings = settings
        return { config in
            config.apns = settings
            config.push.workersEnabled = workers
        }
    }

    func payloads(to token: String) -> [Data] { state.withLockedValue { $0.received[token] ?? [] } }
    func collapseIDs(to token: String) -> [String] { state.withLockedValue { $0.collapseIDs[token] ?? [] } }
    var problems: [String] { state.withLockedValue { $0.problems } }
    var providerTokens: Set<String> { state.withLockedValue { $0.providerTokens } }

    struct Answer {
        let status: Int
        var headers: [(String, String)] = []
        var body: Data? = nil
    }

    /// One request, whole: its header block and body.
    func answer(_ headers: HPACKHeaders, _ body: Data) -> Answer {
        state.withLockedValue { $0.requests += 1 }
        let apnsID = headers.first(name: "apns-id") ?? UUID().uuidString.lowercased()
        func refuse(_ status: Int, _ reason: String, retryAfter: String? = nil) -> Answer {
            if !["Unregistered", "BadDeviceToken", "ServiceUnavailable", "TooManyRequests", "ExpiredProviderToken"].contains(reason) {
                state.withLockedValue { $0.problems.append(reason) }
            }
            var json: [String: Any] = ["reason": reason]
            if status == 410 { json["timestamp"] = Int(Date().timeIntervalSince1970 * 1000) }
            var answer = Answer(status: status, headers: [("apns-id", apnsID), ("content-type", "application/json")])
            if let retryAfter { answer.headers.append(("retry-after", retryAfter)) }
            answer.body = try? JSONSerialization.data(withJSONObject: json)
            return answer
        }
        guard headers.first(name: ":method") == "POST", headers.first(name: ":scheme") == "https",
            headers.first(name: ":authority") ?? headers.first(name: "host") != nil
        else { return refuse(405, "MethodNotAllowed") }
        let path = headers.first(name: ":path") ?? ""
        guard path.hasPrefix("/3/device/") else { return refuse(404, "BadPath") }
        // the provider token
        let authorization = headers.first(name: "authorization") ?? ""
        guard authorization.lowercased().hasPrefix("bearer ") else { return refuse(403, "MissingProviderToken") }
        let jwt = String(authorization.dropFirst("bearer ".count))
        state.withLockedValue { _ = $0.providerTokens.insert(jwt) }
        guard let claims = verifiedClaims(jwt), claims["iss"] as? String == Self.teamID, let iat = claims["iat"] as? Double,
            Date().timeIntervalSince1970 - iat < 3600, iat - Date().timeIntervalSince1970 < 60
        else { return refuse(403, "InvalidProviderToken") }
        // the request
        let token = String(path.dropFirst("/3/device/".count))
        guard token.count >= 16, token.allSatisfy(\.isHexDigit) else { return refuse(400, "BadDeviceToken") }
        guard headers.first(name: "apns-topic") == Self.topic else { return refuse(400, "BadTopic") }
        guard headers.first(name: "apns-push-type") == "background" else { return refuse(400, "InvalidPushType") }
        guard headers.first(name: "apns-priority") == "5" else { return refuse(400, "BadPriority") }
        if let expiration = headers.first(name: "apns-expiration"), Int(expiration) == nil { return refuse(400, "BadExpirationDate") }
        if let collapse = headers.first(name: "apns-collapse-id"), collapse.utf8.count > 64 { return refuse(400, "BadCollapseId") }
        guard body.count <= 4096 else { return refuse(413, "PayloadTooLarge") }
        guard let payload = try? JSONSerialization.jsonObject(with: body) as? [String: Any], let aps = payload["aps"] as? [String: Any],
            aps["content-available"] as? Int == 1, aps["alert"] == nil, aps["sound"] == nil, aps["badge"] == nil
        else { return refuse(400, "PayloadEmpty") }
        switch token.prefix(4) {
        case "dead": return refuse(410, "Unregistered")
        case "bad0": return refuse(400, "BadDeviceToken")
        case "5e5e": return refuse(503, "ServiceUnavailable", retryAfter: "7")
        case "face": return refuse(429, "TooManyRequests", retryAfter: "30")
        case "e7e0": return refuse(403, "ExpiredProviderToken")
        case "e7e7" where Date().timeIntervalSince1970 - iat > 20 * 60: return refuse(403, "ExpiredProviderToken")
        default: break
        }
        state.withLockedValue {
            $0.received[token, default: []].append(body)
            $0.collapseIDs[token, default: []].append(headers.first(name: "apns-collapse-id") ?? "")
        }
        return Answer(status: 200, headers: [("apns-id", apnsID)])
    }

    /// The JWT's claims when its header is `ES256` with our key id and its signature verifies with the public key.
    private func verifiedClaims(_ jwt: String) -> [String: Any]? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Base64URLTest.decode(parts[0]), let claimsData = Base64URLTest.decode(parts[1]),
            let signature = Base64URLTest.decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            header["alg"] as? String == "ES256", header["kid"] as? String == Self.keyID,
            let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            publicKey.isValidSignature(ecdsa, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { return nil }
        return try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
    }

    /// One HTTP/2 stream: collects the request's frames, answers once the client ended its side.
    final class Stream: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame.FramePayload
        typealias OutboundOut = HTTP2Frame.FramePayload

        let emulator: APNsEmulator
        var headers = HPACKHeaders()
        var body = Data()

        init(emulator: APNsEmulator) {
            self.emulator = emulator
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .headers(let frame):
                headers.add(contentsOf: frame.headers)
                if frame.endStream { respond(context) }
            case .data(let frame):
                if case .byteBuffer(let buffer) = frame.data { body.append(contentsOf: buffer.readableBytesView) }
                if frame.endStream { respond(context) }
            default:
                break
            }
        }

        private func respond(_ context: ChannelHandlerContext) {
            let answer = emulator.answer(headers, body)
            var head = HPACKHeaders([(":status", String(answer.status))])
            for (name, value) in answer.headers { head.add(name: name, value: value) }
            if let body = answer.body {
                head.add(name: "content-length", value: String(body.count))
                context.write(wrapOutboundOut(.headers(.init(headers: head))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(ByteBuffer(bytes: body)), endStream: true))), promise: nil)
            } else {
                context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: head, endStream: true))), promise: nil)
            }
        }
    }
}

/// Unpadded base64url for the tests' own decoding (independent of the server's).
enum Base64URLTest {
    static func decode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
