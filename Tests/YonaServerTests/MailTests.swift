import Fluent
import Foundation
import Logging
import Testing

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaDelivery
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// operations.md "Texts and mail": invitation mails through a real SMTP server (aiosmtpd) over STARTTLS or TLS
/// with AUTH; nothing in plaintext; the relay's answers mapped to what the outbox does.
@Suite(.enabled(if: PythonClients.runnable)) struct MailTests {
    static func invite(_ server: TestServer, inviteeFirstName: String, email: String, language: String = "en-US") async throws {
        let richard = try await server.createUser(firstName: "Richard")
        let invited = try await server.request(
            .POST, "\(richard.path)/buddies/", headers: richard.passwordHeader + [("Accept-Language", language)],
            json: [
                "_embedded": [
                    "yona:user": ["firstName": inviteeFirstName, "lastName": "Dun", "mobileNumber": randomMobileNumber(), "emailAddress": email]
                ],
                "message": "Hi", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
            ])
        try #require(invited.status == 201, "\(invited.text)")
    }

    /// The invitation as a real mail: STARTTLS (or TLS from the start) and AUTH before anything, a multipart of text
    /// and HTML that Python's email package reads without a defect, UTF-8 names as encoded words, in the invitee's
    /// language, with the link built from the public base URL.
    @Test(arguments: TestDatabase.available, [SMTPTestServer.Mode.starttls, .implicit])
    func invitationsAreMailedOverTLSWithAuth(db: TestDatabase, mode: SMTPTestServer.Mode) async throws {
        let relay = try await SMTPTestServer.start(mode)
        try await withServer(
            db,
            adjust: {
                $0.email = .smtp(relay.settings())
                $0.publicBaseURL = "https://yona.example"
            }
        ) { server in
            // act
            try await Self.invite(server, inviteeFirstName: "Zoë", email: "zoe@example.com", language: "nl-NL")

            // check
            let mails = try relay.messages()
            try #require(mails.count == 1)
            let mail = mails[0]
            #expect(mail["tls"] as? Bool == true && mail["authenticated"] as? Bool == true)
            #expect(mail["rcpt_tos"] as? [String] == ["zoe@example.com"] && mail["mail_from"] as? String == "noreply@yona.example")
            #expect(mail["helo"] as? String == "yona.example", "the EHLO names our domain, not the host")
            #expect((mail["defects"] as? [String])?.isEmpty == true, "\(mail)")
            let headers = try #require(mail["headers"] as? [String: String])
            #expect(headers["Subject"]?.hasPrefix("Word vriend van Richard ") == true, "\(headers)")
            #expect(headers["To"] == "Zoë Dun <zoe@example.com>")
            #expect(headers["From"]?.hasSuffix("<noreply@yona.example>") == true)
            #expect(headers["Date"] != nil && headers["Message-ID"]?.hasSuffix("@yona.example>") == true && headers["MIME-Version"] == "1.0")
            #expect(mail["content_type"] as? String == "multipart/alternative")
            let parts = try #require(mail["parts"] as? [String: String])
            #expect(parts["text/plain"]?.contains("https://yona.example/users/") == true, "\(parts)")
            #expect(parts["text/plain"]?.contains("tempPassword=") == true)
            #expect(parts["text/html"]?.contains("klik op je telefoon op <a href=\"https://yona.example/users/") == true, "\(parts)")
            // the test server still shows the last mail, as Yona's tests read it
            let last = try await server.request(.GET, "/test/emails/last")
            #expect(last.status == 200 && (last.json["to"] as? String) == "Zoë Dun <zoe@example.com>")
        }
        await relay.remove()
    }

    /// A relay that offers no STARTTLS gets nothing: no AUTH, no MAIL, no message; the outbox calls it misconfigured.
    @Test func aRelayWithoutSTARTTLSGetsNothingInPlaintext() async throws {
        let relay = try await SMTPTestServer.start(.plaintext)
        let transport = SMTPEmailTransport(settings: relay.settings(), logger: Logger(label: "mail-test"))
        let outcome = await transport.deliver(Email(from: "A <x@y.z>", to: "B <someone@example.com>", subject: "s", body: "<p>b</p>", text: "b"))
        #expect(outcome == .misconfigured("SMTP_NO_STARTTLS"))
        #expect(relay.events() == ["EHLO tls=False"], "only the greeting went in plaintext")
        #expect(try relay.messages().isEmpty)
        await relay.remove()
    }

    /// The relay's answers: 4xx later, 550 a dead address, a refused login our settings; an outage then recovery
    /// delivers each queued mail once.
    @Test(arguments: TestDatabase.available)
    func relayAnswersAndAnOutage(db: TestDatabase) async throws {
        let relay = try await SMTPTestServer.start(.starttls)
        let logger = Logger(label: "mail-test")
        let mail = { (to: String) in Email(from: "A <x@y.z>", to: "B <\(to)>", subject: "s", body: "<p>b</p>", text: "b") }
        #expect(await SMTPEmailTransport(settings: relay.settings(), logger: logger).deliver(mail("busy@example.com")) == .retry("SMTP_451"))
        #expect(await SMTPEmailTransport(settings: relay.settings(), logger: logger).deliver(mail("nobody@example.com")) == .deadAddress("SMTP_550"))
        #expect(
            await SMTPEmailTransport(settings: relay.settings(password: "wrong"), logger: logger).deliver(mail("a@example.com"))
                == .misconfigured("SMTP_AUTH"))
        #expect(try relay.messages().isEmpty)

        try await withServer(
            db,
            adjust: {
                $0.email = .smtp(relay.settings())
                $0.publicBaseURL = "https://yona.example"
            }
        ) { server in
            // act: the relay is down while an invitation is made; it comes back
            try await relay.stop()
            try await Self.invite(server, inviteeFirstName: "Bob", email: "bob@example.com")
            let waiting = try await PendingText.query(on: server.app.db).filter(\.$channel == "email").all()
            try #require(waiting.count == 1)
            #expect(waiting[0].state == "pending" && waiting[0].lastError?.hasPrefix("SMTP_CURL_") == true, "\(waiting[0].lastError ?? "")")
            try await relay.restart()
            let outbox = server.app.textOutbox(on: server.app.db)
            #expect(try await outbox.drainOnce(now: Date().addingTimeInterval(600)) == 1)
            #expect(try await outbox.drainOnce(now: Date().addingTimeInterval(7200)) == 0)

            // check: delivered once
            let delivered = try relay.messages().filter { ($0["rcpt_tos"] as? [String]) == ["bob@example.com"] }
            #expect(delivered.count == 1)
            #expect(try await PendingText.query(on: server.app.db).filter(\.$channel == "email").count() == 0)
        }
        await relay.remove()
    }

    @Test func mailSettingsAreChecked() throws {
        let base = ["YONA_PUBLIC_BASE_URL": "https://yona.example"]
        let config = try AppConfig.fromEnvironment(
            base.merging([
                "YONA_EMAIL_PROVIDER": "smtp", "YONA_SMTP_URL": "smtp://relay.example:587", "YONA_EMAIL_FROM": "noreply@yona.example",
                "YONA_SMTP_USERNAME": "u", "YONA_SMTP_PASSWORD": "p",
            ]) { $1 })
        #expect(
            config.email
                == .smtp(
                    .init(url: "smtp://relay.example:587", username: "u", password: "p", fromAddress: "noreply@yona.example", trustRootsPEM: nil)))
        // a private relay's CA as a mounted file: its certificates are what the relay is checked against (the file's
        // name once went through as a secret and the CA was silently dropped: every mail then failed TLS verification)
        let ca = try FCMEmulator.TestCA.make()
        let withCA = try AppConfig.fromEnvironment(
            base.merging([
                "YONA_EMAIL_PROVIDER": "smtp", "YONA_SMTP_URL": "smtp://relay.example:587", "YONA_EMAIL_FROM": "noreply@yona.example",
                "YONA_SMTP_CA_FILE": ca.root,
            ]) { $1 })
        guard case .smtp(let smtp) = withCA.email else {
            Issue.record("no SMTP settings: \(withCA.email)")
            return
        }
        #expect(smtp.trustRootsPEM == (try String(contentsOfFile: ca.root, encoding: .utf8)).trimmingCharacters(in: .newlines))
        for (env, variable) in [
            (["YONA_EMAIL_PROVIDER": "smtp"], "YONA_SMTP_URL"),
            (["YONA_EMAIL_PROVIDER": "smtp", "YONA_SMTP_URL": "http://relay.example"], "YONA_SMTP_URL"),
            (["YONA_EMAIL_PROVIDER": "smtp", "YONA_SMTP_URL": "smtp://relay.example:25"], "YONA_EMAIL_FROM"),
            (["YONA_EMAIL_PROVIDER": "smtp", "YONA_SMTP_URL": "smtp://relay.example", "YONA_EMAIL_FROM": "no reply"], "YONA_EMAIL_FROM"),
            (
                ["YONA_EMAIL_PROVIDER": "smtp", "YONA_SMTP_URL": "smtp://relay.example", "YONA_EMAIL_FROM": "a@b.c", "YONA_SMTP_USERNAME": "u"],
                "YONA_SMTP_PASSWORD"
            ),
            (
                [
                    "YONA_EMAIL_PROVIDER": "smtp", "YONA_SMTP_URL": "smtp://relay.example", "YONA_EMAIL_FROM": "a@b.c",
                    "YONA_SMTP_CA_FILE": "/nonexistent",
                ],
                "YONA_SMTP_CA_FILE"
            ),
            (
                [
                    "YONA_EMAIL_PROVIDER": "smtp", "YONA_SMTP_URL": "smtp://relay.example", "YONA_EMAIL_FROM": "a@b.c",
                    "YONA_SMTP_CA": "not a certificate",
                ],
                "YONA_SMTP_CA"
            ),
            (["YONA_EMAIL_PROVIDER": "sendmail"], "YONA_EMAIL_PROVIDER"),
        ] {
            do {
                _ = try AppConfig.fromEnvironment(base.merging(env) { $1 })
                Issue.record("\(env) was accepted")
            } catch {
                #expect(error.variable == variable, "\(env): \(error)")
            }
        }
        // links that leave come from configuration only: a mail channel needs the public base URL
        do {
            _ = try AppConfig.fromEnvironment(["YONA_EMAIL_PROVIDER": "smtp", "YONA_SMTP_URL": "smtp://relay.example", "YONA_EMAIL_FROM": "a@b.c"])
            Issue.record("a mail channel without YONA_PUBLIC_BASE_URL was accepted")
        } catch {
            #expect(error.variable == "YONA_PUBLIC_BASE_URL")
        }
    }

    /// Start-up says what the server will not do, in one line.
    @Test func startupSaysWhatIsOnlyLogged() throws {
        #expect(
            try AppConfig.fromEnvironment([:]).startupWarning?.hasPrefix(
                "texts (YONA_SMS_PROVIDER=log) and mails (YONA_EMAIL_PROVIDER=log) are only logged") == true)
        let sending = try AppConfig.fromEnvironment([
            "YONA_PUBLIC_BASE_URL": "https://yona.example", "YONA_SMS_PROVIDER": "http", "YONA_SMS_GATEWAY_URL": "https://sms.example",
            "YONA_EMAIL_PROVIDER": "smtp", "YONA_SMTP_URL": "smtps://relay.example", "YONA_EMAIL_FROM": "a@b.example",
        ])
        #expect(sending.startupWarning == nil)
        #expect(
            try AppConfig.fromEnvironment(["YONA_TEST_SERVER": "true"]).startupWarning?.hasPrefix("test server: confirmation codes are fixed")
                == true)
    }

    /// One backoff rule: doubling, capped, never before a provider's Retry-After, itself capped.
    @Test func oneBackoffRule() {
        let backoff = Backoff(base: 5, cap: 900)
        #expect(backoff.delay(afterAttempts: 0, jitter: 1) == 5)
        #expect(backoff.delay(afterAttempts: 3, jitter: 1) == 40)
        #expect(backoff.delay(afterAttempts: 40, jitter: 1.5) == 900)
        #expect(backoff.delay(afterAttempts: 0, retryAfter: 120, jitter: 1) == 120)
        #expect(backoff.delay(afterAttempts: 0, retryAfter: 86_400, jitter: 1) == 3600)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(Backoff.retryAfter("30", now: now) == 30)
        #expect(Backoff.retryAfter(now.addingTimeInterval(90).formatted(.dateTime), now: now) == nil)
        let httpDate = "Fri, 15 Jan 2027 08:01:30 GMT"
        #expect(Backoff.retryAfter(httpDate, now: now) == 90)
    }
}
