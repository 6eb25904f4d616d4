import Crypto
import Foundation
import JWTKit
import NIOConcurrencyHelpers
import Vapor

@testable import YonaConfig
@testable import YonaDomain

/// A local push service, written from RFC 8030 (the push), RFC 8292 (VAPID) and RFC 8291/8188 (`aes128gcm`): each
/// subscription it hands out has its own key pair and auth secret, so it can decrypt what is posted to it, as the
/// subscribing browser would. `POST /push/{id}` checks the VAPID header (an ES256 JWT for this origin, at most 24 h
/// ahead, with a contact, verified with `k`), TTL, the content coding and any `Topic` (RFC 8030's alphabet and length), decrypts and records the plaintext.
/// Answers by the id's prefix: `gone-` 410, `missing-` 404, `busy-` 429 and `down-` 503 with Retry-After 7,
/// `redirect-` 307 to `/trap` (which counts whoever follows it). `setHanging` holds every push until it is lifted. Plain HTTP: the server under test allows private
/// endpoints (`YONA_WEBPUSH_ALLOW_PRIVATE_ENDPOINTS`).
final class WebPushEmulator: Sendable {
    struct Subscriber {
        let key: P256.KeyAgreement.PrivateKey
        let auth: Data
    }

    struct State {
        var subscribers: [String: Subscriber] = [:]
        /// Decrypted plaintexts by subscription id, and the headers that came with them.
        var received: [String: [Data]] = [:]
        var headers: [String: [[String: String]]] = [:]
        /// The VAPID public keys (`k=`) seen.
        var vapidKeys: Set<String> = []
        var problems: [String] = []
        var trapped = 0
        /// While set, every push waits (a push service that stopped answering) and is then dropped with a 503.
        var hanging = false
        var hungRequests = 0
    }

    let app: Application
    let baseURL: String
    let state = NIOLockedValueBox(State())

    private init(app: Application, baseURL: String) {
        self.app = app
        self.baseURL = baseURL
    }

    static func start() async throws -> WebPushEmulator {
        let app = try await Application.make(.testing)
        app.http.server.configuration.hostname = "127.0.0.1"
        app.http.server.configuration.port = 0
        app.logger.logLevel = .warning
        let box = NIOLockedValueBox<WebPushEmulator?>(nil)
        app.on(.POST, "push", ":id", body: .collect(maxSize: 8192)) { req async throws -> Response in
            try await box.withLockedValue { $0! }.push(req)
        }
        app.on(.POST, "trap") { _ -> HTTPStatus in
            box.withLockedValue { $0! }.state.withLockedValue { $0.trapped += 1 }
            return .created
        }
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        let emulator = WebPushEmulator(app: app, baseURL: "http://127.0.0.1:\(app.http.server.shared.localAddress!.port!)")
        box.withLockedValue { $0 = emulator }
        return emulator
    }

    func stop() async {
        await app.server.shutdown()
        try? await app.asyncShutdown()
    }

    /// A new subscription at this push service, as a browser's `PushSubscription.toJSON()` would give it.
    func subscribe(_ id: String) -> WebPushSubscription {
        let key = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        state.withLockedValue { $0.subscribers[id] = Subscriber(key: key, auth: auth) }
        return WebPushSubscription(
            endpoint: "\(baseURL)/push/\(id)",
            keys: .init(p256dh: Base64URLTest.encode(key.publicKey.x963Representation), auth: Base64URLTest.encode(auth)))
    }

    private static let base64URLAlphabet = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    func plaintexts(_ id: String) -> [Data] { state.withLockedValue { $0.received[id] ?? [] } }
    func headers(_ id: String) -> [[String: String]] { state.withLockedValue { $0.headers[id] ?? [] } }
    var problems: [String] { state.withLockedValue { $0.problems } }
    var vapidKeys: Set<String> { state.withLockedValue { $0.vapidKeys } }
    var trapped: Int { state.withLockedValue { $0.trapped } }
    var hungRequests: Int { state.withLockedValue { $0.hungRequests } }
    func setHanging(_ hanging: Bool) { state.withLockedValue { $0.hanging = hanging } }

    private struct VAPIDClaims: JWTPayload {
        let aud: AudienceClaim
        let exp: ExpirationClaim
        let sub: SubjectClaim
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    private func push(_ req: Request) async throws -> Response {
        func refuse(_ status: HTTPResponseStatus, _ problem: String?, retryAfter: String? = nil) -> Response {
            if let problem { state.withLockedValue { $0.problems.append(problem) } }
            let response = Response(status: status)
            if let retryAfter { response.headers.replaceOrAdd(name: "Retry-After", value: retryAfter) }
            return response
        }
        let id = req.parameters.get("id") ?? ""
        guard let subscriber = state.withLockedValue({ $0.subscribers[id] }) else { return refuse(.notFound, nil) }
        // VAPID (RFC 8292 §3): `vapid t=<JWT>, k=<key>`, the JWT signed by k, for this origin, expiring within 24 h
        guard let (token, key) = Self.vapid(req.headers.first(name: .authorization)),
            let point = Base64URLTest.decode(key), let publicKey = try? P256.Signing.PublicKey(x963Representation: point)
        else { return refuse(.unauthorized, "VAPID_HEADER") }
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PublicKey(pem: publicKey.pemRepresentation))
        guard let claims = try? await keys.verify(token, as: VAPIDClaims.self), claims.aud.value == [baseURL],
            claims.exp.value > Date(), claims.exp.value.timeIntervalSinceNow <= 86_400,
            claims.sub.value.hasPrefix("mailto:") || claims.sub.value.hasPrefix("https:")
        else { return refuse(.unauthorized, "VAPID_CLAIMS") }
        state.withLockedValue { _ = $0.vapidKeys.insert(key) }
        guard let ttl = req.headers.first(name: "TTL").flatMap(Int.init), ttl >= 0 else { return refuse(.badRequest, "TTL") }
        guard req.headers.first(name: "Content-Encoding") == "aes128gcm" else { return refuse(.unsupportedMediaType, "CONTENT_ENCODING") }
        // RFC 8030 5.4: a topic is at most 32 characters of the URL- and filename-safe base64 alphabet
        if let topic = req.headers.first(name: "Topic"),
            topic.isEmpty || topic.utf8.count > 32 || !topic.unicodeScalars.allSatisfy({ Self.base64URLAlphabet.contains($0) })
        {
            return refuse(.badRequest, "TOPIC")
        }
        let body = Data(req.body.data.map { $0.readableBytesView } ?? ByteBuffer().readableBytesView)
        guard let plaintext = Self.decrypt(body, for: subscriber) else { return refuse(.badRequest, "DECRYPTION") }
        if state.withLockedValue({ $0.hanging }) {
            state.withLockedValue { $0.hungRequests += 1 }
            while state.withLockedValue({ $0.hanging }) { try await Task.sleep(for: .milliseconds(50)) }
            return refuse(.serviceUnavailable, nil)
        }
        switch id.split(separator: "-").first.map(String.init) ?? "" {
        case "gone": return refuse(.gone, nil)
        case "missing": return refuse(.notFound, nil)
        case "busy": return refuse(.tooManyRequests, nil, retryAfter: "7")
        case "down": return refuse(.serviceUnavailable, nil, retryAfter: "7")
        case "redirect":
            let response = Response(status: .temporaryRedirect)
            response.headers.replaceOrAdd(name: .location, value: "\(baseURL)/trap")
            return response
        default: break
        }
        state.withLockedValue {
            $0.received[id, default: []].append(plaintext)
            $0.headers[id, default: []].append(Dictionary(req.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { $1 }))
        }
        let response = Response(status: .created)
        response.headers.replaceOrAdd(name: .location, value: "\(baseURL)/message/\(UUID().uuidString)")
        return response
    }

    /// `vapid t=…, k=…` (RFC 8292 §3.1; the parameters in either order, spaces optional).
    static func vapid(_ header: String?) -> (token: String, key: String)? {
        guard let header, header.lowercased().hasPrefix("vapid ") else { return nil }
        var fields: [String: String] = [:]
        for part in header.dropFirst(6).split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2 { fields[pair[0]] = pair[1] }
        }
        guard let token = fields["t"], let key = fields["k"] else { return nil }
        return (token, key)
    }

    /// The subscriber's side of RFC 8291: the header's salt and sender key, the shared secret with our private key,
    /// the keys RFC 8188 derives, one record, the padding delimiter stripped.
    static func decrypt(_ body: Data, for subscriber: Subscriber) -> Data? {
        let bytes = [UInt8](body)
        guard bytes.count > 21 else { return nil }
        let salt = Data(bytes[0..<16])
        let idLength = Int(bytes[20])
        guard idLength == 65, bytes.count > 21 + idLength + 16 else { return nil }
        let senderPoint = Data(bytes[21..<(21 + idLength)])
        let record = Data(bytes[(21 + idLength)...])
        guard let sender = try? P256.KeyAgreement.PublicKey(x963Representation: senderPoint),
            let shared = try? subscriber.key.sharedSecretFromKeyAgreement(with: sender)
        else { return nil }
        let info = Data("WebPush: info".utf8) + [0] + subscriber.key.publicKey.x963Representation + senderPoint
        let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: subscriber.auth, sharedInfo: info, outputByteCount: 32)
        let cek = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        guard
            let box = try? AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { Data($0) }), ciphertext: record.dropLast(16), tag: record.suffix(16)),
            var padded = try? AES.GCM.open(box, using: cek)
        else { return nil }
        while padded.last == 0 { padded.removeLast() }
        guard padded.last == 2 else { return nil } // the last record's delimiter
        return padded.dropLast()
    }
}
