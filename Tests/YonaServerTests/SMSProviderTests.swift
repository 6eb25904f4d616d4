import AsyncHTTPClient
import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaDelivery
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// operations.md "Texts and mail": texts through Plivo (Yona's provider) and Twilio, each against a local emulator
/// of its API (`SMSProviderEmulator`), itself proven against the provider's official client.
@Suite struct SMSProviderTests {
    typealias Provider = SMSProviderEmulator.Provider

    static func transport(_ provider: Provider, _ emulator: SMSProviderEmulator, token: String = SMSProviderEmulator.authToken) -> any SMSTransport {
        let logger = Logger(label: "sms-test")
        switch provider {
        case .plivo:
            return PlivoSMSTransport(
                authID: SMSProviderEmulator.plivoAuthID, authToken: token, from: "+31850000000", api: emulator.baseURL, client: .shared,
                logger: logger)
        case .twilio:
            return TwilioSMSTransport(
                accountSID: SMSProviderEmulator.twilioAccountSID, authToken: token, from: "+31850000000", api: emulator.baseURL, client: .shared,
                logger: logger)
        }
    }

    /// The emulator answers the official client as the provider would: the client takes its success answer apart
    /// and raises the documented exception for each error; our transport reads the same answers the same way.
    @Test(.enabled(if: PythonClients.runnable), arguments: [Provider.plivo, .twilio])
    func officialClientsAgreeWithTheEmulator(provider: Provider) async throws {
        let emulator = try await SMSProviderEmulator.start()
        let account = provider == .plivo ? SMSProviderEmulator.plivoAuthID : SMSProviderEmulator.twilioAccountSID
        func client(to number: String, token: String = SMSProviderEmulator.authToken) async throws -> [String: Any] {
            try await PythonClients.run(
                "sms_clients.py", [provider.rawValue, emulator.baseURL, account, token, "+31850000000", number, "Your Yona confirmation code: 1234"])
        }
        let ours = Self.transport(provider, emulator)

        // success: the client reads the message id; our transport sent the same fields the client did
        let number = randomMobileNumber()
        let sent = try await client(to: number)
        let id = try #require(sent["sent"] as? String, "\(sent)")
        #expect(provider == .plivo ? UUID(uuidString: id) != nil : id.hasPrefix("SM") && id.count == 34)
        #expect(await ours.deliver("Your Yona confirmation code: 1234", to: number, kind: "test") == .delivered)
        let both = emulator.texts(to: number)
        try #require(both.count == 2)
        for name in provider == .plivo ? ["src", "dst", "text"] : ["To", "From", "Body"] {
            #expect(both[0].fields[name] == both[1].fields[name], "\(name)")
        }
        if provider == .plivo { #expect(both[1].fields["log"] == "false", "Plivo is asked not to keep the text") }

        // a number the provider refuses
        let refused = randomMobileNumber()
        emulator.state.withLockedValue { _ = $0.refusing.insert(refused) }
        let refusedAnswer = try await client(to: refused)
        #expect(refusedAnswer["error"] as? String == (provider == .plivo ? "ValidationError" : "TwilioRestException"), "\(refusedAnswer)")
        if provider == .twilio { #expect(refusedAnswer["code"] as? Int == 21211) }
        #expect(await ours.deliver("x", to: refused, kind: "test") == .deadAddress(provider == .plivo ? "PLIVO_INVALID_DST" : "TWILIO_21211"))

        // wrong credentials
        let unauthorized = try await client(to: number, token: "wrong-token")
        #expect(unauthorized["error"] as? String == (provider == .plivo ? "AuthenticationError" : "TwilioRestException"), "\(unauthorized)")
        if provider == .twilio { #expect(unauthorized["code"] as? Int == 20003 && unauthorized["status"] as? Int == 401) }
        let misconfigured = await Self.transport(provider, emulator, token: "wrong-token").deliver("x", to: number, kind: "test")
        #expect(misconfigured == .misconfigured(provider == .plivo ? "PLIVO_401" : "TWILIO_20003"))

        // throttled: the client sees 429; our transport keeps the Retry-After
        emulator.state.withLockedValue { $0.mode = .throttled(retryAfter: 42) }
        let throttled = try await client(to: number)
        #expect(throttled["error"] != nil, "\(throttled)")
        if provider == .twilio { #expect(throttled["code"] as? Int == 20429 && throttled["status"] as? Int == 429) }
        #expect(await ours.deliver("x", to: number, kind: "test") == .retry(provider == .plivo ? "PLIVO_429" : "TWILIO_20429", after: 42))
        await emulator.stop()
    }

    /// Confirmation codes, invitations and overwrite codes reach the number through each provider, in the request's
    /// language, with the link built from the public base URL.
    @Test(arguments: TestDatabase.available, [Provider.plivo, .twilio])
    func codesAndInvitationsReachTheNumber(db: TestDatabase, provider: Provider) async throws {
        let emulator = try await SMSProviderEmulator.start()
        let configure = emulator.configure(provider)
        try await withServer(
            db,
            adjust: {
                configure(&$0)
                $0.publicBaseURL = "https://yona.example"
            }
        ) { server in
            // act: a new account (in Dutch), an invitation, an overwrite request
            let richard = try await server.createUser(confirm: false)
            #expect(emulator.texts(to: richard.mobileNumber).map(\.text) == ["Your Yona confirmation code: 1234"])
            let confirmed = try await server.request(
                .POST, "\(richard.path)/confirmMobileNumber", headers: richard.passwordHeader, json: ["code": "1234"])
            #expect(confirmed.status == 200)
            let dutch = randomMobileNumber()
            let created = try await server.request(
                .POST, "/users/", headers: [("Accept-Language", "nl-NL")],
                json: ["firstName": "A", "lastName": "B", "nickname": "C", "mobileNumber": dutch])
            #expect(created.status == 201)
            #expect(emulator.texts(to: dutch).map(\.text) == ["Je Yona-bevestigingscode: 1234"])
            let invitee = randomMobileNumber()
            let invited = try await server.request(
                .POST, "\(richard.path)/buddies/", headers: richard.passwordHeader,
                json: [
                    "_embedded": ["yona:user": ["firstName": "Ivo", "lastName": "X", "mobileNumber": invitee, "emailAddress": "ivo@example.com"]],
                    "message": "Hi", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
                ])
            #expect(invited.status == 201, "\(invited.text)")
            let invitation = try #require(emulator.texts(to: invitee).first?.text)
            #expect(invitation.contains("invites you to become buddies on Yona: https://yona.example/users/"), "\(invitation)")
            let encoded = richard.mobileNumber.replacingOccurrences(of: "+", with: "%2B")
            #expect(try await server.request(.POST, "/admin/requestUserOverwrite/?mobileNumber=\(encoded)").status == 204)
            #expect(emulator.texts(to: richard.mobileNumber).last?.text == "Your Yona code to move your account to a new phone: 1234")
            #expect(emulator.state.withLockedValue { $0.received.allSatisfy { $0.provider == provider && $0.accepted } })
        }
        await emulator.stop()
    }

    /// An outage delays texts and loses none; the provider's Retry-After is honoured; once it is back each goes out
    /// once. A refused number is never tried again; wrong credentials park the text instead of hammering.
    @Test(arguments: TestDatabase.available, [Provider.plivo, .twilio])
    func outagesThrottlingAndRefusals(db: TestDatabase, provider: Provider) async throws {
        let emulator = try await SMSProviderEmulator.start()
        let configure = emulator.configure(provider)
        try await withServer(
            db,
            adjust: {
                configure(&$0)
                $0.publicBaseURL = "https://yona.example"
            }
        ) { server in
            let outbox = server.app.textOutbox(on: server.app.db)
            // throttled: the text waits at least the Retry-After
            emulator.state.withLockedValue { $0.mode = .throttled(retryAfter: 1200) }
            let start = Date()
            let user = try await server.createUser(confirm: false)
            let waiting = try #require(try await PendingText.query(on: server.app.db).all().first)
            #expect(waiting.state == "pending" && waiting.nextAttemptAt >= start.addingTimeInterval(1200), "\(waiting.nextAttemptAt)")
            #expect(try await outbox.drainOnce(now: start.addingTimeInterval(1000)) == 0, "not before the Retry-After")

            // down, then back: one attempt more fails, the next round delivers, no later round sends again
            emulator.state.withLockedValue { $0.mode = .down }
            #expect(try await outbox.drainOnce(now: start.addingTimeInterval(1300)) == 1)
            emulator.state.withLockedValue { $0.mode = .up }
            #expect(try await outbox.drainOnce(now: start.addingTimeInterval(3000)) == 1)
            #expect(try await outbox.drainOnce(now: start.addingTimeInterval(9000)) == 0)
            #expect(emulator.texts(to: user.mobileNumber).map(\.accepted) == [false, false, true])
            #expect(try await PendingText.query(on: server.app.db).count() == 0)

            // a refused number: marked failed at once, never tried again
            let refused = randomMobileNumber()
            emulator.state.withLockedValue { _ = $0.refusing.insert(refused) }
            _ = try await server.createUser(mobileNumber: refused, confirm: false)
            #expect(try await outbox.drainOnce(now: Date().addingTimeInterval(7200)) == 0)
            #expect(emulator.texts(to: refused).count == 1)
            let failed = try #require(try await PendingText.query(on: server.app.db).all().first)
            #expect(failed.state == "failed" && failed.sealed.isEmpty)
            #expect(failed.lastError == (provider == .plivo ? "PLIVO_INVALID_DST" : "TWILIO_21211"))
            let metrics = try await server.request(.GET, "/metrics").text
            #expect(metrics.contains("yona_texts_total{channel=\"sms\",outcome=\"dead_address\"} 1"), "\(metrics)")
            #expect(metrics.contains("yona_texts_total{channel=\"sms\",outcome=\"sent\"} 1"))
        }
        // wrong credentials: the text waits the longest backoff, counted as misconfigured
        try await withServer(
            db,
            adjust: {
                emulator.configure(provider, token: "revoked-token")(&$0)
                $0.publicBaseURL = "https://yona.example"
            }
        ) { server in
            let start = Date()
            _ = try await server.createUser(confirm: false)
            let parked = try #require(try await PendingText.query(on: server.app.db).all().first)
            #expect(parked.state == "pending" && parked.nextAttemptAt >= start.addingTimeInterval(900))
            let metrics = try await server.request(.GET, "/metrics").text
            #expect(metrics.contains("yona_texts_total{channel=\"sms\",outcome=\"misconfigured\"} 1"), "\(metrics)")
        }
        await emulator.stop()
    }

    @Test func providerSettingsAreChecked() throws {
        let base = ["YONA_PUBLIC_BASE_URL": "https://yona.example"]
        let plivo = try AppConfig.fromEnvironment(
            base.merging([
                "YONA_SMS_PROVIDER": "plivo", "YONA_PLIVO_AUTH_ID": "MAZDQ1ZJIYMDZKMTIZZW", "YONA_PLIVO_AUTH_TOKEN": "t", "YONA_SMS_FROM": "Yona",
            ]) { $1 })
        #expect(plivo.sms == .plivo(authID: "MAZDQ1ZJIYMDZKMTIZZW", authToken: "t", from: "Yona", api: "https://api.plivo.com"))
        let sid = SMSProviderEmulator.twilioAccountSID
        let service = "MG" + String(repeating: "ab", count: 16)
        let twilio = try AppConfig.fromEnvironment(
            base.merging([
                "YONA_SMS_PROVIDER": "twilio", "YONA_TWILIO_ACCOUNT_SID": sid, "YONA_TWILIO_AUTH_TOKEN": "t", "YONA_SMS_FROM": service,
                "YONA_TWILIO_API_URL": "http://127.0.0.1:9/",
            ]) { $1 })
        #expect(twilio.sms == .twilio(accountSID: sid, authToken: "t", from: service, api: "http://127.0.0.1:9"))
        for (env, variable) in [
            (["YONA_SMS_PROVIDER": "plivo"], "YONA_PLIVO_AUTH_ID"),
            (["YONA_SMS_PROVIDER": "plivo", "YONA_PLIVO_AUTH_ID": "MA1"], "YONA_SMS_FROM"),
            (["YONA_SMS_PROVIDER": "plivo", "YONA_PLIVO_AUTH_ID": "MA1", "YONA_SMS_FROM": "Yona"], "YONA_PLIVO_AUTH_TOKEN"),
            (
                ["YONA_SMS_PROVIDER": "plivo", "YONA_PLIVO_AUTH_ID": "MA1", "YONA_SMS_FROM": "+31 6 12", "YONA_PLIVO_AUTH_TOKEN": "t"],
                "YONA_SMS_FROM"
            ),
            (["YONA_SMS_PROVIDER": "twilio", "YONA_TWILIO_ACCOUNT_SID": "AC123"], "YONA_TWILIO_ACCOUNT_SID"),
            (
                [
                    "YONA_SMS_PROVIDER": "twilio", "YONA_TWILIO_ACCOUNT_SID": sid, "YONA_TWILIO_AUTH_TOKEN": "t",
                    "YONA_SMS_FROM": "A-very-long-sender",
                ],
                "YONA_SMS_FROM"
            ),
            (
                [
                    "YONA_SMS_PROVIDER": "twilio", "YONA_TWILIO_ACCOUNT_SID": sid, "YONA_TWILIO_AUTH_TOKEN": "t", "YONA_SMS_FROM": "Yona",
                    "YONA_TWILIO_API_URL": "ftp://x",
                ],
                "YONA_TWILIO_API_URL"
            ),
        ] {
            do {
                _ = try AppConfig.fromEnvironment(base.merging(env) { $1 })
                Issue.record("\(env) was accepted")
            } catch {
                #expect(error.variable == variable, "\(env): \(error)")
            }
        }
    }
}
