import Foundation
import JWTKit
import NIOConcurrencyHelpers
import NIOSSL
import Vapor

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaServer

/// A local stand-in for Firebase over real HTTP (push.md "Providers"): an OAuth token endpoint that checks the
/// service account's RS256 JWT, and `messages:send` with bearer check, strict payload validation against
/// `Schemas/push-message.schema.json`, recorded messages, and errors chosen by the token's prefix:
/// `unregistered-`, `malformed-`, `apnsdead-`, `sender-`, `thirdparty-`, `unavailable-` (Retry-After 7),
/// `quota-`, `expire-` (revokes access tokens once, answering a bare 401), `hang-` (answers after 15 s).
final class FCMEmulator: Sendable {
    struct State {
        var issued: Set<String> = []
        var refreshes = 0
        var received: [String: [Data]] = [:]
        var expired: Set<String> = []
        var sendCount = 0
        /// While set, every send waits (like a Firebase that stopped answering) and is then dropped unrecorded.
        var hanging = false
        /// While set, every send is answered 503 UNAVAILABLE at once (Firebase down, no Retry-After).
        var down = false
        var hungRequests = 0
        /// Whether a request held while hanging is answered normally afterwards (else dropped with a 503).
        var answerAfterHang = false
        /// The HTTP major version of every accepted send, in order.
        var httpVersions: [Int] = []
    }

    /// A throwaway CA and a certificate it signed for 127.0.0.1 (made with the openssl tool), for the emulator's TLS.
    struct TestCA {
        let directory: URL
        var root: String { directory.appendingPathComponent("ca.pem").path }
        var certificate: String { directory.appendingPathComponent("server.pem").path }
        var key: String { directory.appendingPathComponent("server.key").path }

        static func make() throws -> TestCA {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("yona-fcm-ca-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let ca = TestCA(directory: directory)
            func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
            let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            _ = try ExternalTool.run(
                "openssl",
                ["req", "-x509"] + curve + [
                    "-keyout", path("ca.key"), "-out", ca.root, "-days", "2", "-subj", "/CN=Test FCM CA",
                    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                ])
            _ = try ExternalTool.run("openssl", ["req"] + curve + ["-keyout", ca.key, "-out", path("server.csr"), "-subj", "/CN=127.0.0.1"])
            try Data("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n".utf8).write(
                to: URL(fileURLWithPath: path("server.ext")))
            _ = try ExternalTool.run(
                "openssl",
                [
                    "x509", "-req", "-in", path("server.csr"), "-CA", ca.root, "-CAkey", path("ca.key"), "-CAcreateserial",
                    "-out", ca.certificate, "-days", "2", "-extfile", path("server.ext"),
                ])
            return ca
        }
    }

    let app: Application
    let baseURL: String
    let state = NIOLockedValueBox(State())
    static let projectID = "yona-emulator"

    private init(app: Application, baseURL: String) {
        self.app = app
        self.baseURL = baseURL
    }

    /// Plain HTTP/1.1, or with `tls` HTTPS offering HTTP/2 and HTTP/1.1 by ALPN, as fcm.googleapis.com does.
    static func start(tls: TestCA? = nil) async throws -> FCMEmulator {
        let app = try await Application.make(.testing)
        app.http.server.configuration.hostname = "127.0.0.1"
        app.http.server.configuration.port = 0
        if let tls {
            app.http.server.configuration.tlsConfiguration = .makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(tls.certificate).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: tls.key, format: .pem)))
            app.http.server.configuration.supportVersions = [.one, .two]
        }
        app.logger.logLevel = .warning
        let keys = JWTKeyCollection()
        let publicPEM = try String(contentsOf: fixture("test-service-account.pub.pem"), encoding: .utf8)
        await keys.add(rsa: try Insecure.RSA.PublicKey(pem: publicPEM), digestAlgorithm: .sha256, kid: "test-key-1")
        let schema = try JSONSchema.load("push-message.schema.json")
        let box = NIOLockedValueBox<FCMEmulator?>(nil)
        app.post("token") { req async throws -> Response in
            try await box.withLockedValue { $0! }.token(req, keys: keys)
        }
        app.post("v1", "projects", ":project", ":send") { req async throws -> Response in
            try await box.withLockedValue { $0! }.send(req, schema: schema)
        }
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        let emulator = FCMEmulator(
            app: app, baseURL: "\(tls == nil ? "http" : "https")://127.0.0.1:\(app.http.server.shared.localAddress!.port!)")
        box.withLockedValue { $0 = emulator }
        return emulator
    }

    func stop() async {
        await app.server.shutdown()
        try? await app.asyncShutdown()
    }

    static func fixture(_ name: String) -> URL {
        Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures")!
    }

    /// A copy of the test service account whose token_uri points at this emulator.
    func serviceAccountFile() throws -> String {
        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.fixture("test-service-account.json"))) as! [String: Any]
        json["token_uri"] = "\(baseURL)/token"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sa-\(UUID().uuidString).json").path
        _ = FileManager.default.createFile(atPath: path, contents: try JSONSerialization.data(withJSONObject: json))
        return path
    }

    func setHanging(_ hanging: Bool, thenAnswer: Bool = false) {
        state.withLockedValue {
            $0.hanging = hanging
            if hanging { $0.answerAfterHang = thenAnswer }
        }
    }
    var hungRequests: Int { state.withLockedValue { $0.hungRequests } }
    func setDown(_ down: Bool) { state.withLockedValue { $0.down = down } }

    /// Points a test server's push provider at this emulator.
    func configure(workers: Bool) throws -> (inout AppConfig) -> Void {
        let account = try serviceAccountFile()
        return { config in
            config.pushProvider = "fcm"
            config.fcmServiceAccountPath = account
            config.fcmEndpoint = self.baseURL
            config.push.workersEnabled = workers
        }
    }

    func messages(to token: String) -> [Data] { state.withLockedValue { $0.received[token] ?? [] } }
    var httpVersions: [Int] { state.withLockedValue { $0.httpVersions } }
    var refreshes: Int { state.withLockedValue { $0.refreshes } }

    // MARK: - endpoints

    private struct Grant: JWTPayload {
        let iss: IssuerClaim
        let scope: String
        let aud: AudienceClaim
        let iat: IssuedAtClaim
        let exp: ExpirationClaim
        func verify(using algorithm: some JWTAlgorithm) throws {
            try exp.verifyNotExpired()
        }
    }

    private func token(_ req: Request, keys: JWTKeyCollection) async throws -> Response {
        struct Form: Content {
            // swift-format-ignore: AlwaysUseLowerCamelCase
            let grant_type: String // OAuth's field name
            let assertion: String
        }
        let form = try req.content.decode(Form.self, as: .urlEncodedForm)
        guard form.grant_type == "urn:ietf:params:oauth:grant-type:jwt-bearer",
            let grant = try? await keys.verify(form.assertion, as: Grant.self),
            grant.scope == "https://www.googleapis.com/auth/firebase.messaging",
            grant.iss.value == "pusher@yona-emulator.iam.gserviceaccount.com",
            grant.aud.value.contains("\(baseURL)/token"),
            grant.exp.value.timeIntervalSince(grant.iat.value) <= 3600
        else {
            return Self.json(400, ["error": "invalid_grant"])
        }
        let token = "emu-\(UUID().uuidString)"
        state.withLockedValue {
            $0.issued.insert(token)
            $0.refreshes += 1
        }
        return Self.json(200, ["access_token": token, "expires_in": 3600, "token_type": "Bearer"])
    }

    private func send(_ req: Request, schema: JSONSchema) async throws -> Response {
        guard req.parameters.get("send") == "messages:send", req.parameters.get("project") == Self.projectID else {
            return Self.error(404, "NOT_FOUND", details: [])
        }
        let bearer = req.headers.bearerAuthorization?.token ?? ""
        guard state.withLockedValue({ $0.issued.contains(bearer) }) else {
            return Self.error(401, "UNAUTHENTICATED", details: [])
        }
        let body = Data(req.body.data.map { $0.readableBytesView } ?? ByteBuffer().readableBytesView)
        let violations = schema.violations(of: body)
        guard violations.isEmpty else {
            return Self.error(
                400, "INVALID_ARGUMENT",
                details: [
                    ["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "INVALID_ARGUMENT"],
                    [
                        "@type": "type.googleapis.com/google.rpc.BadRequest",
                        "fieldViolations": [["field": "message", "description": violations.joined(separator: "; ")]],
                    ],
                ])
        }
        if state.withLockedValue({ $0.hanging }) {
            state.withLockedValue { $0.hungRequests += 1 }
            while state.withLockedValue({ $0.hanging }) { try await Task.sleep(for: .milliseconds(50)) }
            if !state.withLockedValue({ $0.answerAfterHang }) { return Self.error(503, "UNAVAILABLE", details: []) }
        }
        if state.withLockedValue({ $0.down }) { return Self.error(503, "UNAVAILABLE", details: []) }
        let token =
            ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])
            .flatMap { ($0["message"] as? [String: Any])?["token"] as? String } ?? ""
        func fcm(_ code: String) -> [String: Any] { ["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code] }
        switch token.split(separator: "-").first.map(String.init) ?? "" {
        case "unregistered": return Self.error(404, "NOT_FOUND", details: [fcm("UNREGISTERED")])
        case "malformed": return Self.error(400, "INVALID_ARGUMENT", details: [fcm("INVALID_ARGUMENT")])
        case "apnsdead":
            return Self.error(
                400, "INVALID_ARGUMENT",
                details: [
                    fcm("INVALID_ARGUMENT"),
                    ["@type": "type.googleapis.com/google.firebase.fcm.v1.ApnsError", "statusCode": 410, "reason": "Unregistered"],
                ])
        case "sender": return Self.error(403, "PERMISSION_DENIED", details: [fcm("SENDER_ID_MISMATCH")])
        case "thirdparty": return Self.error(401, "UNAUTHENTICATED", details: [fcm("THIRD_PARTY_AUTH_ERROR")])
        case "unavailable": return Self.error(503, "UNAVAILABLE", details: [fcm("UNAVAILABLE")], retryAfter: "7")
        case "quota": return Self.error(429, "RESOURCE_EXHAUSTED", details: [fcm("QUOTA_EXCEEDED")])
        case "expire":
            let first = state.withLockedValue { s -> Bool in
                guard !s.expired.contains(token) else { return false }
                s.expired.insert(token)
                s.issued.removeAll()
                return true
            }
            if first { return Self.error(401, "UNAUTHENTICATED", details: []) }
        case "hang":
            try await Task.sleep(for: .seconds(15))
        default:
            break
        }
        let number = state.withLockedValue { s -> Int in
            s.received[token, default: []].append(body)
            s.httpVersions.append(req.version.major)
            s.sendCount += 1
            return s.sendCount
        }
        return Self.json(200, ["name": "projects/\(Self.projectID)/messages/\(number)"])
    }

    private static func error(_ code: Int, _ status: String, details: [[String: Any]], retryAfter: String? = nil) -> Response {
        let response = json(code, ["error": ["code": code, "message": "emulated \(status)", "status": status, "details": details]])
        if let retryAfter { response.headers.replaceOrAdd(name: "Retry-After", value: retryAfter) }
        return response
    }

    private static func json(_ status: Int, _ object: [String: Any]) -> Response {
        let response = Response(status: HTTPResponseStatus(statusCode: status))
        response.headers.contentType = .json
        response.body = .init(data: (try? JSONSerialization.data(withJSONObject: object)) ?? Data())
        return response
    }
}
