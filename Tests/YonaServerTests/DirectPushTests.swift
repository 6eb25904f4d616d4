import AsyncHTTPClient
import Crypto
import Fluent
import Foundation
import Testing

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaDelivery
@testable import YonaDomain
@testable import YonaPush
@testable import YonaServer
@testable import YonaStore

/// Pushes without Google: APNs directly and Web Push (operations.md "Pushes without Google"), each against a local
/// emulator written from Apple's documentation and the RFCs, the emulators first proven with PyPI's clients.
@Suite struct DirectPushTests {
    static func push(_ address: PushAddress, id: Int64 = 42) -> OutgoingPush {
        OutgoingPush(address: address, messageID: id, publicBaseURL: "https://yona.example")
    }

    static let hexToken = String(repeating: "0123456789abcdef", count: 4)

    /// A throwaway file (a key for a Python client).
    static func file(_ name: String, _ contents: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString)-\(name)").path
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    // MARK: - the emulators, proven by independent clients

    @Test(.enabled(if: PythonClients.runnable)) func theAPNsEmulatorAnswersAioapns() async throws {
        let emulator = try await APNsEmulator.start()
        let keyFile = try Self.file("apns.p8", emulator.keyPEM)
        func send(_ token: String, key: String = keyFile) async throws -> [String: Any] {
            try await PythonClients.run(
                "push_clients.py",
                ["apns", emulator.baseURL, emulator.ca.root, key, APNsEmulator.keyID, APNsEmulator.teamID, APNsEmulator.topic, token, "42"])
        }
        // a good push is accepted and its payload recorded
        let ok = try await send(Self.hexToken)
        #expect(ok["sent"] as? Bool == true, "\(ok)")
        let payload = try #require(emulator.payloads(to: Self.hexToken).first)
        let json = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        #expect(json["messageId"] as? String == "42")
        // a dead token is reported as Apple reports it
        let dead = try await send("dead" + Self.hexToken.dropFirst(4))
        #expect(dead["status"] as? Int == 410)
        #expect(dead["reason"] as? String == "Unregistered")
        // a token signed with another key is refused
        let stranger = try Self.file("other.p8", P256.Signing.PrivateKey().pemRepresentation)
        let refused = try await send(Self.hexToken, key: stranger)
        #expect(refused["status"] as? Int == 403)
        #expect(refused["reason"] as? String == "InvalidProviderToken")
        #expect(emulator.payloads(to: Self.hexToken).count == 1)
        #expect(emulator.problems == ["InvalidProviderToken"])
        await emulator.stop()
    }

    @Test(.enabled(if: PythonClients.runnable)) func theWebPushEmulatorAnswersPywebpush() async throws {
        let emulator = try await WebPushEmulator.start()
        let keyFile = try Self.file("vapid.pem", P256.Signing.PrivateKey().pemRepresentation)
        func send(_ subscription: WebPushSubscription, _ text: String, topic: String = "") async throws -> [String: Any] {
            try await PythonClients.run(
                "push_clients.py",
                [
                    "webpush", subscription.endpoint, subscription.keys.p256dh, subscription.keys.auth, keyFile, "mailto:ops@yona.example", text,
                    topic,
                ])
        }
        let subscription = emulator.subscribe("ok-1")
        #expect(try await send(subscription, "Hello, Yona ✓ 42")["status"] as? Int == 201)
        #expect(emulator.plaintexts("ok-1") == [Data("Hello, Yona ✓ 42".utf8)])
        let gone = try await send(emulator.subscribe("gone-1"), "x")
        #expect(gone["status"] as? Int == 410)
        // RFC 8030's Topic: taken when it is at most 32 URL-safe base64 characters, refused with 400 otherwise
        #expect(try await send(emulator.subscribe("ok-2"), "y", topic: "inbox")["status"] as? Int == 201)
        #expect(emulator.headers("ok-2").first?["topic"] == "inbox")
        #expect(emulator.problems.isEmpty, "\(emulator.problems)")
        #expect(try await send(emulator.subscribe("ok-3"), "z", topic: "not a topic")["status"] as? Int == 400)
        #expect(emulator.problems == ["TOPIC"])
        await emulator.stop()
    }

    // MARK: - Web Push's encryption and the SSRF bound

    /// RFC 8291 Appendix A: the sender's key and salt fixed, the body is the RFC's, byte for byte.
    @Test func rfc8291sWorkedExample() throws {
        func bytes(_ text: String) -> Data { Base64URLTest.decode(text)! }
        let receiver = try WebPushEncryption.ReceiverKeys(
            p256dh: "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4", auth: "BTBZMqHH6r4Tts7J_aSIgg")
        let sender = try P256.KeyAgreement.PrivateKey(rawRepresentation: bytes("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"))
        let body = try WebPushEncryption.encrypt(
            Data("When I grow up, I want to be a watermelon".utf8), to: receiver, senderKey: sender, salt: bytes("DGv6ra1nlYgDCS1FRnbzlw"))
        #expect(
            Base64URLTest.encode(body)
                == "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
        )
        // and a fresh key and salt each time, which the subscriber's side still opens
        let key = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { UInt8($0) })
        let keys = try WebPushEncryption.ReceiverKeys(
            p256dh: Base64URLTest.encode(key.publicKey.x963Representation), auth: Base64URLTest.encode(auth))
        let once = try WebPushEncryption.encrypt(Data("hi".utf8), to: keys)
        let twice = try WebPushEncryption.encrypt(Data("hi".utf8), to: keys)
        #expect(once != twice)
        #expect(WebPushEmulator.decrypt(once, for: .init(key: key, auth: auth)) == Data("hi".utf8))
        // keys that are no P-256 point or no 16-byte secret are refused
        #expect(throws: WebPushEncryption.InvalidKeys.self) { try WebPushEncryption.ReceiverKeys(p256dh: "BAAA", auth: "BTBZMqHH6r4Tts7J_aSIgg") }
        #expect(throws: WebPushEncryption.InvalidKeys.self) {
            try WebPushEncryption.ReceiverKeys(p256dh: Base64URLTest.encode(key.publicKey.x963Representation), auth: "c2hvcnQ")
        }
    }

    /// The server must not become a relay into its own network: only https to public addresses.
    @Test func onlyHTTPSOnPublicAddresses() async throws {
        let refused: [(String, String)] = [
            ("http://push.example.com/x", "NOT_HTTPS"), ("ftp://push.example.com/x", "NOT_HTTPS"), ("https://127.0.0.1/x", "PRIVATE_ADDRESS"),
            ("https://[::1]/x", "PRIVATE_ADDRESS"), ("https://10.1.2.3/x", "PRIVATE_ADDRESS"), ("https://172.20.0.1/x", "PRIVATE_ADDRESS"),
            ("https://192.168.1.1/x", "PRIVATE_ADDRESS"), ("https://169.254.169.254/latest", "PRIVATE_ADDRESS"),
            ("https://100.64.0.1/x", "PRIVATE_ADDRESS"), ("https://0.0.0.0/x", "PRIVATE_ADDRESS"), ("https://224.0.0.1/x", "PRIVATE_ADDRESS"),
            ("https://[::ffff:10.0.0.1]/x", "PRIVATE_ADDRESS"), ("https://[fd00::1]/x", "PRIVATE_ADDRESS"),
            ("https://[fe80::1]/x", "PRIVATE_ADDRESS"),
            ("https://[64:ff9b::7f00:1]/x", "PRIVATE_ADDRESS"), ("https://[2002:7f00:1::]/x", "PRIVATE_ADDRESS"),
            ("https://[2001:db8::1]/x", "PRIVATE_ADDRESS"), ("https://localhost/x", "PRIVATE_ADDRESS"),
            ("https://user:pw@8.8.8.8/x", "MALFORMED"), ("not a url", "MALFORMED"),
        ]
        for (url, reason) in refused {
            await #expect(throws: PublicEndpoint.Refused(reason: reason), "\(url)") { _ = try await PublicEndpoint.check(url, allowPrivate: false) }
        }
        for url in ["https://8.8.8.8/push/1", "https://[2606:4700:4700::1111]/push", "https://1.1.1.1:8443/x"] {
            #expect(try await PublicEndpoint.check(url, allowPrivate: false).absoluteString == url)
        }
        // a test server's emulator on loopback only with the switch
        #expect(try await PublicEndpoint.check("http://127.0.0.1:9/push/1", allowPrivate: true).host == "127.0.0.1")
    }

    // MARK: - the providers against the emulators

    @Test func apnsOutcomesFollowApplesAnswers() async throws {
        let emulator = try await APNsEmulator.start()
        let client = try PushHTTPClient.make(concurrency: 8, trustRootsPEM: emulator.settings.trustRootsPEM)
        let tokens = try await APNsProviderToken(keyPEM: emulator.keyPEM, keyID: APNsEmulator.keyID, teamID: APNsEmulator.teamID)
        let apns = APNsPushProvider(settings: emulator.settings, tokens: tokens, client: client)
        func token(_ prefix: String) -> String { prefix + Self.hexToken.dropFirst(prefix.count) }
        // many pushes, one provider token, all over HTTP/2
        let outcomes = await withTaskGroup(of: PushOutcome.self) { group in
            for index in 0..<20 { group.addTask { await apns.send(Self.push(.apns(token("00\(index + 10)")), id: Int64(index))) } }
            return await group.reduce(into: [PushOutcome]()) { $0.append($1) }
        }
        #expect(outcomes.allSatisfy { $0 == .delivered })
        #expect(emulator.providerTokens.count == 1)
        #expect(await tokens.issued == 1)
        let body = try #require(emulator.payloads(to: token("0010")).first)
        let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(Set(json.keys) == ["aps", "messageId", "url"])
        #expect(json["url"] as? String == "https://yona.example/messages/0")
        // one collapse id for every push: an undelivered one is replaced by the next (the outbox's coalescing)
        #expect(emulator.collapseIDs(to: token("0010")) == ["inbox"])
        // Apple's answers
        #expect(await apns.send(Self.push(.apns(token("dead")))) == .tokenInvalid(reason: "APNS_UNREGISTERED"))
        #expect(await apns.send(Self.push(.apns(token("bad0")))) == .tokenInvalid(reason: "APNS_BADDEVICETOKEN"))
        #expect(await apns.send(Self.push(.apns(token("5e5e")))) == .retry(after: 7, quota: false, code: "APNS_SERVICEUNAVAILABLE"))
        #expect(await apns.send(Self.push(.apns(token("face")))) == .retry(after: 30, quota: true, code: "APNS_TOOMANYREQUESTS"))
        // a token younger than 20 minutes that Apple calls expired is not renewed (Apple would refuse that too): later
        #expect(await apns.send(Self.push(.apns(token("e7e0")))) == .retry(after: 60, quota: false, code: "APNS_EXPIREDPROVIDERTOKEN"))
        #expect(await tokens.issued == 1)
        #expect(emulator.problems.isEmpty, "\(emulator.problems)")
        // a token made 25 minutes ago that Apple calls expired is renewed once, and the push goes
        let older = try await APNsProviderToken(keyPEM: emulator.keyPEM, keyID: APNsEmulator.keyID, teamID: APNsEmulator.teamID)
        _ = try await older.token(now: Date().addingTimeInterval(-25 * 60))
        let renewing = APNsPushProvider(settings: emulator.settings, tokens: older, client: client)
        #expect(await renewing.send(Self.push(.apns(token("e7e7")), id: 7)) == .delivered)
        #expect(await renewing.send(Self.push(.apns(token("e7e7")), id: 8)) == .delivered)
        #expect(await older.issued == 2)
        #expect(emulator.payloads(to: token("e7e7")).count == 2)
        // the wrong topic is our mistake: refused, not retried
        var wrongTopic = emulator.settings
        wrongTopic.topic = "org.other.app"
        #expect(
            await APNsPushProvider(settings: wrongTopic, tokens: tokens, client: client).send(Self.push(.apns(Self.hexToken)))
                == .rejected(code: "APNS_BADTOPIC"))
        try await client.shutdown()
        await emulator.stop()
    }

    @Test func webPushIsEncryptedSignedAndNeverRedirected() async throws {
        let emulator = try await WebPushEmulator.start()
        let client = try PushHTTPClient.make(concurrency: 8, trustRootsPEM: nil)
        let vapid = try await VAPID(pem: VAPID.generatePEM(), subject: "mailto:ops@yona.example")
        let webPush = WebPushPushProvider(vapid: vapid, client: client, endpoints: EndpointCheck(allowPrivate: true))
        #expect(await webPush.send(Self.push(.webPush(emulator.subscribe("ok-a")), id: 5)) == .delivered)
        let plaintext = try #require(emulator.plaintexts("ok-a").first)
        #expect(String(decoding: plaintext, as: UTF8.self) == #"{"messageId":"5","url":"https://yona.example/messages/5"}"#)
        let headers = try #require(emulator.headers("ok-a").first)
        #expect(headers["ttl"] == "86400")
        #expect(headers["urgency"] == "high")
        #expect(headers["topic"] == "inbox")
        #expect(emulator.vapidKeys == [vapid.publicKey])
        #expect(await webPush.send(Self.push(.webPush(emulator.subscribe("gone-a")))) == .tokenInvalid(reason: "WEBPUSH_HTTP_410"))
        #expect(await webPush.send(Self.push(.webPush(emulator.subscribe("missing-a")))) == .tokenInvalid(reason: "WEBPUSH_HTTP_404"))
        #expect(await webPush.send(Self.push(.webPush(emulator.subscribe("busy-a")))) == .retry(after: 7, quota: true, code: "WEBPUSH_HTTP_429"))
        #expect(await webPush.send(Self.push(.webPush(emulator.subscribe("down-a")))) == .retry(after: 7, quota: false, code: "WEBPUSH_HTTP_503"))
        // a push service answering with a redirect does not steer the server anywhere
        #expect(await webPush.send(Self.push(.webPush(emulator.subscribe("redirect-a")))) == .rejected(code: "WEBPUSH_HTTP_307"))
        #expect(emulator.trapped == 0)
        // without the tests' switch, the emulator's loopback endpoint is refused at send time and the address dropped
        let strict = WebPushPushProvider(vapid: vapid, client: client, endpoints: EndpointCheck(allowPrivate: false))
        #expect(await strict.send(Self.push(.webPush(emulator.subscribe("ok-b")))) == .tokenInvalid(reason: "WEBPUSH_NOT_HTTPS"))
        #expect(emulator.plaintexts("ok-b").isEmpty)
        #expect(emulator.problems.isEmpty, "\(emulator.problems)")
        try await client.shutdown()
        await emulator.stop()
    }

    // MARK: - through the server

    static func json(_ subscription: WebPushSubscription) -> [String: Any] {
        [
            "endpoint": subscription.endpoint, "keys": ["p256dh": subscription.keys.p256dh, "auth": subscription.keys.auth],
            "expirationTime": NSNull(),
        ]
    }

    /// A test server whose APNs provider points at an emulator and which may post to a Web Push emulator on loopback.
    static func withDirectPushServer(
        _ db: TestDatabase, workers: Bool, _ body: (TestServer, APNsEmulator, WebPushEmulator) async throws -> Void
    ) async throws {
        let apns = try await APNsEmulator.start()
        let webPush = try await WebPushEmulator.start()
        let configureAPNs = apns.configure(workers: workers)
        try await withServer(
            db,
            adjust: {
                configureAPNs(&$0)
                $0.webPushAllowPrivateEndpoints = true
            }
        ) { server in try await body(server, apns, webPush) }
        await apns.stop()
        await webPush.stop()
    }

    static func device(_ server: TestServer, _ user: TestUser) async throws -> DeviceAnonymized {
        let (ua, _) = try await server.vpnLogin(user)
        return try #require(try await DeviceAnonymized.query(on: server.app.db).filter(\.$userAnonymized.$id == UUID(uuidString: ua)!).first())
    }

    /// The story ends on an iPhone reached through Apple alone and a phone without Google reached by Web Push: one
    /// content-free push each, the Web Push one readable only with the subscriber's keys; a phone that moved from
    /// Firebase is reached only through its new address; a dead subscription is cleared and not tried again.
    @Test(arguments: TestDatabase.available)
    func conflictPushesReachAppleAndWebPushDirectly(db: TestDatabase) async throws {
        try await Self.withDirectPushServer(db, workers: true) { server, apns, webPush in
            let bobToken = "ab" + Self.hexToken.dropFirst(2)
            let richard = try await server.createUser(nickname: "Dad", extra: BuddyTests.phone("fiid-richard"))
            let bob = try await server.createUser(firstName: "Bobbert", nickname: "Bobby", extra: BuddyTests.phone("fiid-bob"))
            // Bob's iPhone moves from Firebase to APNs
            let (bobsDeviceID, _) = try await DevicesTests.firstDevice(server, bob)
            let moveToApple = try await server.request(
                .PUT, "\(bob.path)/devices/\(bobsDeviceID)", headers: bob.passwordHeader, json: ["name": "Phone", "apnsToken": bobToken.uppercased()])
            #expect(moveToApple.status == 200, "\(moveToApple.text)")
            // Richard's phone moves from Firebase to Web Push
            let subscription = webPush.subscribe("ok-richard")
            let (deviceID, _) = try await DevicesTests.firstDevice(server, richard)
            let moved = try await server.request(
                .PUT, "\(richard.path)/devices/\(deviceID)", headers: richard.passwordHeader,
                json: ["name": "Phone", "webPushSubscription": Self.json(subscription)])
            #expect(moved.status == 200, "\(moved.text)")
            for hidden in ["firebaseInstanceId", "webPushSubscription", "apnsToken", "ok-richard", bobToken] {
                #expect(!moved.text.contains(hidden), "the device answer shows \(hidden)")
            }
            let richardsRow = try await Self.device(server, richard)
            #expect(richardsRow.firebaseInstanceID == nil && richardsRow.apnsToken == nil)
            #expect(richardsRow.webPushSubscription.flatMap(WebPushSubscription.init(stored:)) == subscription)
            let bobsRow = try await Self.device(server, bob)
            #expect(bobsRow.apnsToken == bobToken, "stored in lower case")
            #expect(bobsRow.firebaseInstanceID == nil)

            try await BuddyTests.connect(server, richard: richard, bob: bob)
            _ = try await server.messages(richard)
            try await server.addNoGoGoal(bob, category: GoalsTests.gambling)
            let (ua, index) = try await server.vpnLogin(bob)
            try await PushTests.drained(server)
            let before = (apns.payloads(to: bobToken).count, webPush.plaintexts("ok-richard").count)
            try await server.postNetworkActivity(ua, deviceIndex: index, categories: ["gambling"], url: "https://poker.example/direct")
            try await PushTests.drained(server)

            let own = try #require(try await server.messages(bob).first?["messageId"] as? Int)
            let copy = try #require(try await server.messages(richard).first?["messageId"] as? Int)
            let toApple = apns.payloads(to: bobToken)
            let toRichard = webPush.plaintexts("ok-richard")
            #expect(toApple.count == before.0 + 1, "exactly one push to Apple for the conflict")
            #expect(toRichard.count == before.1 + 1, "exactly one Web Push for the conflict")
            let schemas = (apns: try JSONSchema.load("apns-payload.schema.json"), webPush: try JSONSchema.load("webpush-payload.schema.json"))
            #expect(schemas.apns.violations(of: try #require(toApple.last)).isEmpty)
            #expect(schemas.webPush.violations(of: try #require(toRichard.last)).isEmpty)
            for (body, expected) in [(try #require(toApple.last), own), (try #require(toRichard.last), copy)] {
                let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
                #expect(json["messageId"] as? String == String(expected))
                #expect(Set(json.keys).subtracting(["aps"]) == ["messageId", "url"])
                let text = String(decoding: body, as: UTF8.self)
                for secret in [bob.id, bob.mobileNumber, "Bobbert", "Bobby", "poker", "gambling", "Gambling", ua, richard.nickname] {
                    #expect(!text.contains(secret), "the push carries \(secret)")
                }
            }
            // the Instance IDs the phones had before they moved got nothing
            for old in ["fiid-richard", "fiid-bob"] {
                #expect(try await PushDelivery.query(on: server.app.db).filter(\.$tokenHash == TokenHash.of(old)).count() == 0, "\(old)")
            }
            // the VAPID key the push service saw is the one the server publishes
            let published = try await server.request(.GET, "/webPush/vapidPublicKey")
            #expect(webPush.vapidKeys == [try #require(published.json["publicKey"] as? String)])

            // a subscription that is gone is cleared on its device and not tried again
            let gone = webPush.subscribe("gone-richard")
            _ = try await server.request(
                .PUT, "\(richard.path)/devices/\(deviceID)", headers: richard.passwordHeader,
                json: ["name": "Phone", "webPushSubscription": Self.json(gone)])
            try await server.postNetworkActivity(
                ua, deviceIndex: index, categories: ["gambling"], url: "https://poker.example/again", at: Date().addingTimeInterval(-7200))
            try await PushTests.drained(server)
            #expect(try await Self.device(server, richard).webPushSubscription == nil, "the dead subscription was cleared")
            let failed = try await PendingPush.query(on: server.app.db).filter(\.$lastError == "WEBPUSH_HTTP_410").all()
            #expect(failed.count == 1 && failed.allSatisfy { $0.state == "failed" })
            #expect(try await Self.device(server, bob).apnsToken == bobToken)
            let metrics = try await server.request(.GET, "/metrics").text
            #expect(metrics.contains("yona_push_tokens_cleared_total{reason=\"WEBPUSH_HTTP_410\"} 1"))
            #expect(metrics.contains("yona_push_request_duration_seconds_count{provider=\"apns\"}"))
            #expect(apns.problems.isEmpty && webPush.problems.isEmpty, "\(apns.problems) \(webPush.problems)")
        }
    }

    /// In the outbox, a Retry-After of either provider delays the row that long; a dead APNs token is cleared and
    /// its push failed, not retried.
    @Test(arguments: TestDatabase.available)
    func theOutboxHonoursRetryAfterOfBothProviders(db: TestDatabase) async throws {
        try await Self.withDirectPushServer(db, workers: false) { server, _, webPush in
            let owner = try await server.createUser()
            let (ua, _) = try await server.vpnLogin(owner)
            let now = Date()
            let addresses: [PushAddress] = [
                .apns("5e5e" + Self.hexToken.dropFirst(4)), .webPush(webPush.subscribe("busy-1")), .webPush(webPush.subscribe("down-1")),
                .apns("dead" + Self.hexToken.dropFirst(4)),
            ]
            var rows: [UUID] = []
            for (index, address) in addresses.enumerated() {
                let device = DeviceAnonymized(
                    id: UUID(), userAnonymizedID: UUID(uuidString: ua)!, deviceIndex: index + 1, operatingSystem: "IOS", appVersion: "1",
                    appVersionCode: 1, firebaseInstanceID: nil)
                address.apply(to: device, at: now)
                try await device.create(on: server.app.db)
                let row = PendingPush(id: UUID(), deviceID: device.id!, messageID: Int64(index + 1), now: now.addingTimeInterval(-1))
                try await row.create(on: server.app.db)
                rows.append(row.id!)
            }
            #expect(try await server.app.pushDispatcher.drainOnce() == 4)
            func row(_ index: Int) async throws -> PendingPush { try #require(try await PendingPush.find(rows[index], on: server.app.db)) }
            for index in 0..<3 {
                let delayed = try await row(index)
                #expect(delayed.state == "pending")
                #expect(delayed.nextAttemptAt.timeIntervalSince(now) >= 6.5, "\(delayed.lastError ?? "")")
            }
            #expect(try await row(1).nextAttemptAt.timeIntervalSince(now) >= 59, "a 429 waits at least a minute")
            #expect(try await row(3).state == "failed")
            #expect(try await DeviceAnonymized.query(on: server.app.db).filter(\.$apnsToken == "dead" + Self.hexToken.dropFirst(4)).count() == 0)
            // (a fixed clock: on a loaded machine the 7 s may have passed by now)
            #expect(try await server.app.pushDispatcher.drainOnce(now: now.addingTimeInterval(5)) == 0, "nothing is due before its time")
        }
    }

    /// A dead subscription is cleared by the text its column holds, whatever JSON writer stored it (keys in another
    /// order, escaped slashes): the compare-and-set matches what the claim read, not a re-encoding.
    @Test(arguments: TestDatabase.available)
    func aDeadSubscriptionIsClearedWhateverWroteItsJSON(db: TestDatabase) async throws {
        try await Self.withDirectPushServer(db, workers: false) { server, _, webPush in
            let owner = try await server.createUser()
            let (ua, _) = try await server.vpnLogin(owner)
            let gone = webPush.subscribe("gone-2")
            let escapedEndpoint = gone.endpoint.replacingOccurrences(of: "/", with: "\\/")
            let text = #"{"keys":{"p256dh":"\#(gone.keys.p256dh)","auth":"\#(gone.keys.auth)"},"endpoint":"\#(escapedEndpoint)"}"#
            #expect(text != gone.stored && WebPushSubscription(stored: text) == gone)
            let device = DeviceAnonymized(
                id: UUID(), userAnonymizedID: UUID(uuidString: ua)!, deviceIndex: 1, operatingSystem: "ANDROID", appVersion: "1",
                appVersionCode: 1, firebaseInstanceID: nil)
            device.webPushSubscription = text
            device.firebaseInstanceIDUpdatedAt = Date()
            try await device.create(on: server.app.db)
            try await PendingPush(id: UUID(), deviceID: device.id!, messageID: 9, now: Date().addingTimeInterval(-1)).create(on: server.app.db)
            #expect(try await server.app.pushDispatcher.drainOnce() == 1)
            #expect(try await DeviceAnonymized.find(device.id!, on: server.app.db)?.webPushSubscription == nil)
        }
    }

    /// Addresses the server cannot or must not push to are refused when the app sends them, with one error code.
    @Test(arguments: TestDatabase.available)
    func pushAddressesAreCheckedWhenTheAppSendsThem(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            let (deviceID, _) = try await DevicesTests.firstDevice(server, user)
            let path = "\(user.path)/devices/\(deviceID)"
            let key = P256.KeyAgreement.PrivateKey()
            let keys: [String: Any] = ["p256dh": Base64URLTest.encode(key.publicKey.x963Representation), "auth": "BTBZMqHH6r4Tts7J_aSIgg"]
            func subscription(_ endpoint: String, keys: [String: Any] = keys) -> [String: Any] { ["endpoint": endpoint, "keys": keys] }
            let refused: [(String, [String: Any])] = [
                ("http endpoint", ["webPushSubscription": subscription("http://push.example.com/x")]),
                ("loopback", ["webPushSubscription": subscription("https://127.0.0.1:8443/push")]),
                ("private", ["webPushSubscription": subscription("https://10.0.0.7/push")]),
                ("metadata service", ["webPushSubscription": subscription("https://169.254.169.254/latest/meta-data")]),
                ("IPv6 loopback", ["webPushSubscription": subscription("https://[::1]/push")]),
                ("a name for loopback", ["webPushSubscription": subscription("https://localhost/push")]),
                ("not a point", ["webPushSubscription": subscription("https://8.8.8.8/push", keys: ["p256dh": "BAAAAA", "auth": keys["auth"]!])]),
                (
                    "short secret",
                    ["webPushSubscription": subscription("https://8.8.8.8/push", keys: ["p256dh": keys["p256dh"]!, "auth": "c2hvcnQ"])]
                ),
                ("APNs token not hex", ["apnsToken": "this-is-not-hex-at-all"]),
                ("APNs token too short", ["apnsToken": "abcd"]),
                ("two addresses", ["apnsToken": Self.hexToken, "firebaseInstanceId": "fiid-two"]),
            ]
            for (name, fields) in refused {
                var body = fields
                body["name"] = "Phone"
                let answer = try await server.request(.PUT, path, headers: user.passwordHeader, json: body)
                #expect(answer.status == 400, "\(name): \(answer.text)")
                #expect(answer.errorCode == "error.device.invalid.push.address", "\(name)")
            }
            let malformed = try await server.request(
                .PUT, path, headers: user.passwordHeader, json: ["name": "Phone", "webPushSubscription": ["endpoint": 7]])
            #expect(malformed.status == 400)
            #expect(try await Self.device(server, user).webPushSubscription == nil, "nothing refused was stored")
            // a public endpoint (an address literal: no name to resolve here) with good keys is taken
            let taken = try await server.request(
                .PUT, path, headers: user.passwordHeader, json: ["name": "Phone", "webPushSubscription": subscription("https://8.8.8.8/push/abc")])
            #expect(taken.status == 200, "\(taken.text)")
            #expect(try await Self.device(server, user).webPushSubscription?.contains("https://8.8.8.8/push/abc") == true)
            // the published VAPID key is a P-256 point and stays the same
            let first = try #require(try await server.request(.GET, "/webPush/vapidPublicKey").json["publicKey"] as? String)
            let point = try #require(Base64URLTest.decode(first))
            #expect(point.count == 65 && point.first == 0x04)
            #expect(try await server.request(.GET, "/webPush/vapidPublicKey").json["publicKey"] as? String == first)
        }
    }
}
