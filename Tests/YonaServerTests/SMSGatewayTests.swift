import Foundation
import NIOConcurrencyHelpers
import Testing
import Vapor

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaDelivery
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// operations.md "Configuration" (`YONA_SMS_PROVIDER=http`): texts go to an HTTP gateway, here a local one
/// that records what it gets and refuses the numbers a test names (`refusing`).
@Suite struct SMSGatewayTests {
    final class Gateway: Sendable {
        struct Received: Sendable {
            let authorization: String?
            let body: [String: String]
            let accepted: Bool
            /// When the gateway got it (by this machine's clock, which the server under test shares).
            var at = Date()
        }
        let app: Application
        let url: String
        let received: NIOLockedValueBox<[Received]>
        /// While set, every text is answered 503 (the provider is down).
        let down = NIOLockedValueBox(false)
        /// Numbers every text to is refused. (A rule on the number's last digits refused one random test number in a
        /// hundred: the outage test then failed for a text the gateway was told to refuse.)
        let refusing = NIOLockedValueBox<Set<String>>([])
        /// While set, a text is held unanswered (and then refused with 503, as if dropped); `hung` counts them.
        let hang = NIOLockedValueBox(false)
        let hung = NIOLockedValueBox(0)

        init() async throws {
            app = try await Application.make(.testing)
            app.logger.logLevel = .warning
            let box = NIOLockedValueBox<[Received]>([])
            let (down, refusing) = (self.down, self.refusing)
            let (hang, hung) = (self.hang, self.hung)
            app.post("send") { req async throws -> HTTPStatus in
                let body = try req.content.decode([String: String].self)
                if hang.withLockedValue({ $0 }) {
                    hung.withLockedValue { $0 += 1 }
                    while hang.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(50)) }
                    box.withLockedValue { $0.append(Received(authorization: nil, body: body, accepted: false)) }
                    return .serviceUnavailable
                }
                let refused = body["to"].map { to in refusing.withLockedValue { $0.contains(to) } } ?? false
                let accepted = !refused && !down.withLockedValue { $0 }
                box.withLockedValue { $0.append(Received(authorization: req.headers.first(name: .authorization), body: body, accepted: accepted)) }
                return accepted ? .accepted : .serviceUnavailable
            }
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
            url = "http://127.0.0.1:\(app.http.server.shared.localAddress!.port!)/send"
            received = box
        }

        func texts(to number: String) -> [Received] { received.withLockedValue { $0.filter { $0.body["to"] == number } } }

        func stop() async {
            await app.server.shutdown()
            try? await app.asyncShutdown()
        }
    }

    @Test(arguments: TestDatabase.available)
    func codesAndInvitationsGoThroughTheGateway(db: TestDatabase) async throws {
        let gateway = try await Gateway()
        try await withServer(db, adjust: { $0.sms = .http(url: gateway.url, token: "sms-gateway-token", from: "Yona") }) { server in
            // act: a new account, an invitation, an overwrite request
            let richard = try await server.createUser(confirm: false)
            let confirmation = try #require(gateway.texts(to: richard.mobileNumber).first)
            #expect(confirmation.authorization == "Bearer sms-gateway-token")
            #expect(confirmation.body["from"] == "Yona")
            #expect(confirmation.body["text"] == "Your Yona confirmation code: 1234")
            let confirmed = try await server.request(
                .POST, "\(richard.path)/confirmMobileNumber", headers: richard.passwordHeader, json: ["code": "1234"])
            #expect(confirmed.status == 200)
            let invitee = randomMobileNumber()
            let invited = try await server.request(
                .POST, "\(richard.path)/buddies/", headers: richard.passwordHeader,
                json: [
                    "_embedded": ["yona:user": ["firstName": "Ivo", "lastName": "X", "mobileNumber": invitee, "emailAddress": "buddy@example.com"]],
                    "message": "Claim your prize at https://phish.example/win", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
                ])
            #expect(invited.status == 201, "\(invited.text)")
            let invitation = try #require(gateway.texts(to: invitee).first?.body["text"])
            #expect(invitation.contains("invites you to become buddies on Yona: \(server.baseURL)/users/"))
            #expect(invitation.contains("tempPassword="))
            // issue 13: the inviter's typed message is no spam channel: neither the text nor the mail carries it (it
            // reaches the invitee sealed, inside the app, as Yona's connect request did)
            let mail = try await server.request(.GET, "/test/emails/last")
            #expect(mail.status == 200 && mail.text.contains("tempPassword="), "\(mail.text)")
            for leaving in [invitation, mail.text] {
                #expect(!leaving.contains("phish.example") && !leaving.contains("prize"), "\(leaving)")
            }
            let encoded = richard.mobileNumber.replacingOccurrences(of: "+", with: "%2B")
            #expect(try await server.request(.POST, "/admin/requestUserOverwrite/?mobileNumber=\(encoded)").status == 204)
            #expect(gateway.texts(to: richard.mobileNumber).last?.body["text"] == "Your Yona code to move your account to a new phone: 1234")
            // a gateway that refuses does not fail the request; the user can ask for the code again
            let refused = randomMobileNumber()
            gateway.refusing.withLockedValue { _ = $0.insert(refused) }
            let created = try await server.request(
                .POST, "/users/", json: ["firstName": "A", "lastName": "B", "nickname": "C", "mobileNumber": refused])
            #expect(created.status == 201, "\(created.text)")
            #expect(gateway.texts(to: refused).count == 1)
        }
        await gateway.stop()
    }

    /// As Yona's SMS templates: a text is in the language of the request that causes it (the apps send
    /// `Accept-Language`); English otherwise.
    @Test(arguments: TestDatabase.available)
    func textsSpeakTheRequestsLanguage(db: TestDatabase) async throws {
        let gateway = try await Gateway()
        try await withServer(db, adjust: { $0.sms = .http(url: gateway.url, token: "sms-gateway-token", from: "Yona") }) { server in
            // act: one account made in Dutch, one without a language, then a Dutch overwrite request for the first
            let dutch = randomMobileNumber()
            let english = randomMobileNumber()
            for (number, headers) in [(dutch, [("Accept-Language", "nl-NL,nl;q=0.9")]), (english, [])] {
                let created = try await server.request(
                    .POST, "/users/", headers: headers, json: ["firstName": "A", "lastName": "B", "nickname": "C", "mobileNumber": number])
                try #require(created.status == 201, "\(created.text)")
            }
            let encoded = dutch.replacingOccurrences(of: "+", with: "%2B")
            let requested = try await server.request(
                .POST, "/admin/requestUserOverwrite/?mobileNumber=\(encoded)", headers: [("Accept-Language", "nl-NL")])
            #expect(requested.status == 204)
            // check
            #expect(
                gateway.texts(to: dutch).map { $0.body["text"] } == [
                    "Je Yona-bevestigingscode: 1234", "Je Yona-code om je account naar een nieuwe telefoon te verhuizen: 1234",
                ])
            #expect(gateway.texts(to: english).map { $0.body["text"] } == ["Your Yona confirmation code: 1234"])
        }
        await gateway.stop()
    }

    /// issue 13: texts go through a durable outbox. A provider outage fails no request; the text waits, sealed, and
    /// the background job sends it once the provider is back, once.
    @Test(arguments: TestDatabase.available)
    func aGatewayOutageDelaysTextsButLosesNoneAndSendsNoneTwice(db: TestDatabase) async throws {
        let gateway = try await Gateway()
        gateway.down.withLockedValue { $0 = true }
        try await withServer(db, adjust: { $0.sms = .http(url: gateway.url, token: nil, from: "Yona") }) { server in
            // act: an account is made while the gateway is down (createUser requires the 201)
            let user = try await server.createUser(confirm: false)
            #expect(gateway.texts(to: user.mobileNumber).map(\.accepted) == [false], "tried at once")

            // check: the text waits, and the row holds neither the number nor the code
            let rows = try await PendingText.query(on: server.app.db).all()
            try #require(rows.count == 1)
            #expect(rows[0].state == "pending" && rows[0].lastError == "HTTP_503")
            for secret in [user.mobileNumber, "Your Yona confirmation code"] {
                #expect(rows[0].sealed.range(of: Data(secret.utf8)) == nil, "the outbox row holds \(secret) in plain")
            }
            // the waiting text is counted (by the database, per channel) on /metrics and the console's dashboard
            #expect(try await server.request(.GET, "/metrics").text.contains("yona_text_outbox_depth 1"))
            let waiting = try await TextQueue.depthByChannel(on: server.app.db)["sms"]
            #expect(waiting?.count == 1 && waiting?.oldest == rows[0].createdAt, "\(String(describing: waiting))")

            // the gateway comes back: the job's next round sends it, and no later round sends it again
            gateway.down.withLockedValue { $0 = false }
            let outbox = server.app.textOutbox(on: server.app.db)
            #expect(try await outbox.drainOnce(now: Date().addingTimeInterval(600)) == 1)
            #expect(gateway.texts(to: user.mobileNumber).map(\.accepted) == [false, true])
            #expect(gateway.texts(to: user.mobileNumber).last?.body["text"] == "Your Yona confirmation code: 1234")
            #expect(try await outbox.drainOnce(now: Date().addingTimeInterval(7200)) == 0)
            #expect(try await PendingText.query(on: server.app.db).count() == 0, "a sent text leaves nothing behind")
            let metrics = try await server.request(.GET, "/metrics").text
            #expect(metrics.contains("yona_texts_total{channel=\"sms\",outcome=\"retry\"} 1"))
            #expect(metrics.contains("yona_texts_total{channel=\"sms\",outcome=\"sent\"} 1"))
            #expect(metrics.contains("yona_text_outbox_depth 0"))
        }
        await gateway.stop()
    }

    /// privacy.md: a direct message cannot reach the recipient's devices, so the recipient is told by a
    /// content-free text; at most three an hour per number, and none for device-list changes.
    @Test(arguments: TestDatabase.available)
    func directMessagesAreAnnouncedByAContentFreeText(db: TestDatabase) async throws {
        let gateway = try await Gateway()
        try await withServer(db, adjust: { $0.sms = .http(url: gateway.url, token: nil, from: "Yona") }) { server in
            // (three notices an hour: all of it within one hour's window)
            try await RateLimitTests.inOneWindow(of: 3600) {
                // setup
                let richard = try await server.createUser(firstName: "Richardo", nickname: "Rico")
                let bob = try await server.createUser(firstName: "Bobbert", nickname: "Bobo", extra: BuddyTests.phone("fiid-bob"))
                func notices(_ user: TestUser) -> [String] {
                    gateway.texts(to: user.mobileNumber).compactMap { $0.body["text"] }.filter { !$0.contains("code") }
                }

                // act and check: request, acceptance, a renamed phone, a removal
                try await BuddyTests.connect(server, richard: richard, bob: bob)
                #expect(notices(bob) == [MessageNotices.text], "the request")
                #expect(notices(richard) == [MessageNotices.text], "the acceptance")
                let (deviceID, _) = try await DevicesTests.firstDevice(server, bob)
                let renamed = try await server.request(.PUT, "\(bob.path)/devices/\(deviceID)", headers: bob.passwordHeader, json: ["name": "Tablet"])
                #expect(renamed.status == 200)
                #expect(notices(richard).count == 1, "a device-list change sends no text")
                let buddies = try await server.request(.GET, "\(richard.path)/buddies/", headers: richard.passwordHeader)
                let buddyPath = try #require(value(buddies.json, "_embedded", "yona:buddies", 0, "_links", "self", "href") as? String)
                #expect(try await server.request(.DELETE, buddyPath, headers: richard.passwordHeader).status == 204)
                #expect(notices(bob).count == 2, "the removal")
                // a third and a fourth direct message within the hour: only the third is texted
                try await OverwriteTests.invite(server, from: richard, to: bob)
                let reject = try #require(try await server.messages(bob).compactMap { value($0, "_links", "yona:reject", "href") as? String }.first)
                #expect(
                    try await server.request(.POST, reject, headers: bob.passwordHeader, json: ["properties": [:] as [String: Any]]).status == 200)
                try await OverwriteTests.invite(server, from: richard, to: bob)
                #expect(notices(bob).count == 3)
                // nothing in any text says who wrote or what
                for text in notices(bob) + notices(richard) {
                    for secret in [richard.firstName, richard.nickname, bob.firstName, bob.nickname, "Dunn", "Shall we?", richard.mobileNumber] {
                        #expect(!text.contains(secret))
                    }
                }
            }
        }
        await gateway.stop()
    }

    @Test func gatewaySettingsAreChecked() throws {
        let config = try AppConfig.fromEnvironment([
            "YONA_SMS_PROVIDER": "http", "YONA_SMS_GATEWAY_URL": "https://sms.example/send",
            "YONA_SMS_GATEWAY_TOKEN": "t0ken", "YONA_SMS_FROM": "YonaNL",
            "YONA_PUBLIC_BASE_URL": "https://yona.example",
        ])
        #expect(config.sms == .http(url: "https://sms.example/send", token: "t0ken", from: "YonaNL"))
        #expect(try AppConfig.fromEnvironment([:]).sms == .log)
        for (env, variable) in [
            (["YONA_SMS_PROVIDER": "pigeon"], "YONA_SMS_PROVIDER"),
            (["YONA_SMS_PROVIDER": "http"], "YONA_SMS_GATEWAY_URL"),
            (["YONA_SMS_PROVIDER": "http", "YONA_SMS_GATEWAY_URL": "ftp://x"], "YONA_SMS_GATEWAY_URL"),
            (
                ["YONA_SMS_PROVIDER": "http", "YONA_SMS_GATEWAY_URL": "https://sms.example", "YONA_SMS_FROM": String(repeating: "x", count: 17)],
                "YONA_SMS_FROM"
            ),
            // issue 13, attack 5: texted links are never built from a caller's Host header
            (["YONA_SMS_PROVIDER": "http", "YONA_SMS_GATEWAY_URL": "https://sms.example"], "YONA_PUBLIC_BASE_URL"),
        ] {
            do {
                _ = try AppConfig.fromEnvironment(env)
                Issue.record("\(env) was accepted")
            } catch {
                #expect(error.variable == variable, "\(env)")
            }
        }
    }

    /// issue 16: secrets from files, as container platforms mount them.
    @Test func secretsCanComeFromFiles() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("yona-secret-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("file-internal-token-0123456789\n".utf8).write(to: file)
        let config = try AppConfig.fromEnvironment(["YONA_INTERNAL_TOKEN_FILE": file.path])
        #expect(config.internalToken == "file-internal-token-0123456789")
        #expect(throws: AppConfig.Invalid.self) {
            try AppConfig.fromEnvironment(["YONA_INTERNAL_TOKEN_FILE": file.path, "YONA_INTERNAL_TOKEN": "another-token-0123456789"])
        }
        do {
            _ = try AppConfig.fromEnvironment(["YONA_RECOVERY_KEY_FILE": "/nonexistent/secret"])
            Issue.record("an unreadable secret file must stop the start")
        } catch {
            #expect(error.description == "configuration error: YONA_RECOVERY_KEY_FILE names a file that cannot be read: /nonexistent/secret")
        }
    }
}
