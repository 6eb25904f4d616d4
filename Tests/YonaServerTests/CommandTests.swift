import Fluent
import Foundation
import Testing

@testable import YonaAPI
@testable import YonaServer
@testable import YonaStore

/// operations.md "Executable": the operator's commands, run as the real executable.
@Suite struct CommandTests {
    /// Runs `yona-server` with arguments and environment; returns exit status and standard output.
    static func run(_ arguments: [String], environment: [String: String], in directory: URL? = nil) async throws -> (Int32, String) {
        try await ExternalTool.detached { try runBlocking(arguments, environment: environment, in: directory) }
    }

    private static func runBlocking(_ arguments: [String], environment: [String: String], in directory: URL?) throws -> (Int32, String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("yona-cmd-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let status = try ChildProcess.server(arguments, environment: environment, directory: directory?.path, output: output).wait()
        return (status, String(decoding: FileManager.default.contents(atPath: output) ?? Data(), as: UTF8.self))
    }

    @Test func pushTestSendsOneContentFreePushAndPrintsTheAnswer() async throws {
        let emulator = try await FCMEmulator.start()
        let environment = [
            "YONA_FCM_SERVICE_ACCOUNT": try emulator.serviceAccountFile(), "YONA_FCM_ENDPOINT": emulator.baseURL,
            "YONA_INTERNAL_TOKEN": TestServer.internalToken, "YONA_RECOVERY_KEY": TestServer.recoveryKey, "YONA_LOG_LEVEL": "warning",
            "YONA_DATABASE_URL": "sqlite://\(FileManager.default.temporaryDirectory.path)/yona-cmd-\(UUID().uuidString).sqlite",
        ]
        let (ok, okOutput) = try await Self.run(["push-test", "--instance-id", "ok-cli"], environment: environment)
        #expect(ok == 0, "\(okOutput)")
        #expect(okOutput.contains("provider: fcm"))
        #expect(okOutput.contains("answer: delivered"))
        #expect(emulator.messages(to: "ok-cli").count == 1)
        let (dead, deadOutput) = try await Self.run(["push-test", "--instance-id", "unregistered-cli"], environment: environment)
        #expect(dead != 0)
        #expect(deadOutput.contains("dead or malformed"))
        await emulator.stop()
    }

    /// operations.md "Pushes without Google": `push-test` with an APNs token or a Web Push subscription goes through
    /// that provider; `vapid generate` prints a key pair the server accepts.
    @Test func pushTestReachesAppleAndAWebPushServiceDirectly() async throws {
        let apns = try await APNsEmulator.start()
        let webPush = try await WebPushEmulator.start()
        let (generated, keys) = try await Self.run(["vapid", "generate"], environment: [:])
        #expect(generated == 0, "\(keys)")
        let begin = try #require(keys.range(of: "-----BEGIN PRIVATE KEY-----"))
        let end = try #require(keys.range(of: "-----END PRIVATE KEY-----"))
        let pem = keys[begin.lowerBound..<end.upperBound]
        let publicKey = try #require(keys.split(separator: "\n").last { $0.hasPrefix("public key") }?.split(separator: " ").last)
        let keyFile = try DirectPushTests.file("vapid.pem", String(pem))
        let subscriptionFile = try DirectPushTests.file(
            "subscription.json", String(decoding: try JSONEncoder().encode(webPush.subscribe("ok-cli")), as: UTF8.self))
        let environment = [
            "YONA_APNS_KEY_FILE": try DirectPushTests.file("apns.p8", apns.keyPEM), "YONA_APNS_KEY_ID": APNsEmulator.keyID,
            "YONA_APNS_TEAM_ID": APNsEmulator.teamID, "YONA_APNS_TOPIC": APNsEmulator.topic, "YONA_APNS_URL": apns.baseURL,
            "YONA_APNS_CA_FILE": apns.ca.root, "YONA_VAPID_PRIVATE_KEY_FILE": keyFile, "YONA_WEBPUSH_ALLOW_PRIVATE_ENDPOINTS": "true",
            "YONA_INTERNAL_TOKEN": TestServer.internalToken, "YONA_RECOVERY_KEY": TestServer.recoveryKey, "YONA_LOG_LEVEL": "warning",
            "YONA_DATABASE_URL": "sqlite://\(FileManager.default.temporaryDirectory.path)/yona-cmd-\(UUID().uuidString).sqlite",
        ]
        let token = "cafe" + DirectPushTests.hexToken.dropFirst(4)
        let (ok, okOutput) = try await Self.run(["push-test", "--apns-token", token], environment: environment)
        #expect(ok == 0 && okOutput.contains("provider: apns") && okOutput.contains("answer: delivered"), "\(okOutput)")
        #expect(apns.payloads(to: token).count == 1)
        let (dead, deadOutput) = try await Self.run(["push-test", "--apns-token", "dead" + token.dropFirst(4)], environment: environment)
        #expect(dead == 1 && deadOutput.contains("dead or malformed (APNS_UNREGISTERED)"), "\(deadOutput)")
        let (web, webOutput) = try await Self.run(["push-test", "--webpush-subscription", subscriptionFile], environment: environment)
        #expect(web == 0 && webOutput.contains("provider: webpush") && webOutput.contains("answer: delivered"), "\(webOutput)")
        #expect(webPush.plaintexts("ok-cli").count == 1)
        #expect(webPush.vapidKeys == [String(publicKey)], "the push was signed with the generated key")
        await apns.stop()
        await webPush.stop()
    }

    /// operations.md "Texts and mail": `sms-test` and `email-test` send one through the configured provider and say
    /// what it answered; a start-up with a misconfigured channel stops with one line naming the variable.
    @Test func smsTestAndEmailTestSendOneAndPrintTheAnswer() async throws {
        let emulator = try await SMSProviderEmulator.start()
        let environment = [
            "YONA_SMS_PROVIDER": "twilio", "YONA_TWILIO_ACCOUNT_SID": SMSProviderEmulator.twilioAccountSID,
            "YONA_TWILIO_AUTH_TOKEN": SMSProviderEmulator.authToken, "YONA_TWILIO_API_URL": emulator.baseURL, "YONA_SMS_FROM": "+31850000000",
            "YONA_PUBLIC_BASE_URL": "https://yona.example", "YONA_INTERNAL_TOKEN": TestServer.internalToken,
            "YONA_RECOVERY_KEY": TestServer.recoveryKey, "YONA_LOG_LEVEL": "warning",
            "YONA_DATABASE_URL": "sqlite://\(FileManager.default.temporaryDirectory.path)/yona-cmd-\(UUID().uuidString).sqlite",
        ]
        let number = randomMobileNumber()
        let (ok, okOutput) = try await Self.run(["sms-test", "--to", number], environment: environment)
        #expect(ok == 0, "\(okOutput)")
        #expect(okOutput.contains("provider: twilio") && okOutput.contains("answer: delivered"), "\(okOutput)")
        #expect(emulator.texts(to: number).map(\.accepted) == [true])
        emulator.state.withLockedValue { _ = $0.unsubscribed.insert(number) }
        let (dead, deadOutput) = try await Self.run(["sms-test", "--to", number], environment: environment)
        #expect(dead == 1 && deadOutput.contains("will never deliver to this address (TWILIO_21610)"), "\(deadOutput)")
        let (mail, mailOutput) = try await Self.run(["email-test", "--to", "someone@example.com"], environment: environment)
        #expect(mail == 0 && mailOutput.contains("provider: log"), "\(mailOutput)")
        var broken = environment
        broken["YONA_TWILIO_AUTH_TOKEN"] = nil
        let (stopped, stoppedOutput) = try await Self.run(["sms-test", "--to", number], environment: broken)
        #expect(stopped == 1 && stoppedOutput.contains("YONA_TWILIO_AUTH_TOKEN must be set when YONA_SMS_PROVIDER is 'twilio'"), "\(stoppedOutput)")
        await emulator.stop()
    }

    /// `email-test` through a relay whose certificate comes from a private CA given as `YONA_SMTP_CA_FILE`, as an
    /// operator configures it: the mail arrives over STARTTLS with AUTH (before the fix the CA never reached libcurl).
    @Test func emailTestTrustsThePrivateCAOfItsRelay() async throws {
        let relay = try await SMTPTestServer.start(.starttls)
        let environment = [
            "YONA_EMAIL_PROVIDER": "smtp", "YONA_SMTP_URL": relay.url, "YONA_SMTP_USERNAME": SMTPTestServer.user,
            "YONA_SMTP_PASSWORD": SMTPTestServer.password, "YONA_SMTP_CA_FILE": relay.ca.root, "YONA_EMAIL_FROM": "noreply@yona.example",
            "YONA_PUBLIC_BASE_URL": "https://yona.example", "YONA_INTERNAL_TOKEN": TestServer.internalToken,
            "YONA_RECOVERY_KEY": TestServer.recoveryKey, "YONA_LOG_LEVEL": "warning",
            "YONA_DATABASE_URL": "sqlite://\(FileManager.default.temporaryDirectory.path)/yona-cmd-\(UUID().uuidString).sqlite",
        ]
        let (status, output) = try await Self.run(["email-test", "--to", "someone@example.com"], environment: environment)
        #expect(status == 0 && output.contains("provider: smtp") && output.contains("answer: delivered"), "\(output)")
        let received = try relay.messages()
        #expect(received.count == 1, "\(received)")
        #expect(received.first?["tls"] as? Bool == true && received.first?["authenticated"] as? Bool == true, "\(received)")
        await relay.remove()
    }

    @Test func simulateConflictPostsAsTheClassifierWould() async throws {
        try await withServer(.sqlite) { server in
            // setup: a user with a danger zone, made through the API of an in-process server on the same file
            let user = try await server.createUser()
            try await server.addNoGoGoal(user, category: GoalsTests.gambling)
            let (ua, index) = try await server.vpnLogin(user)
            let environment = [
                "YONA_DATABASE_URL": "sqlite://\(server.databaseLocation)", "YONA_INTERNAL_TOKEN": TestServer.internalToken,
                "YONA_RECOVERY_KEY": TestServer.recoveryKey,
                "YONA_LOG_LEVEL": "warning", "YONA_PUSH_WORKERS": "false",
            ]
            // act
            let (status, output) = try await Self.run(
                [
                    "simulate", "conflict", "--vpn-login-id", "\(ua)$\(index)", "--category", "gambling",
                    "--url", "https://poker.example/demo",
                ], environment: environment)
            // check
            #expect(status == 0, "\(output)")
            #expect(output.contains("goal-conflict messages raised: 1"))
            let messages = try await server.messages(user)
            #expect(messages.first?["url"] as? String == "https://poker.example/demo")
            let (bad, badOutput) = try await Self.run(
                ["simulate", "conflict", "--vpn-login-id", "nonsense", "--category", "gambling"],
                environment: environment)
            #expect(bad != 0)
            #expect(badOutput.contains("--vpn-login-id must look like"))
        }
    }

    @Test func badConfigurationStopsWithOneLineNamingTheVariable() async throws {
        let (status, output) = try await Self.run(["serve"], environment: ["YONA_PORT": "eighty"])
        #expect(status != 0)
        #expect(
            output.trimmingCharacters(in: .whitespacesAndNewlines) == "configuration error: YONA_PORT must be a port number 1-65535, got 'eighty'")
    }

    static func environment(database: String) -> [String: String] {
        [
            "YONA_DATABASE_URL": "sqlite://\(database)", "YONA_INTERNAL_TOKEN": TestServer.internalToken,
            "YONA_RECOVERY_KEY": TestServer.recoveryKey, "YONA_LOG_LEVEL": "warning", "YONA_PUSH_WORKERS": "false",
        ]
    }

    static func temporaryDatabase() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("yona-cmd-\(UUID().uuidString).sqlite").path
    }

    @Test func everyCommandHasHelpAndMistakesGetOneLineAndStatusTwo() async throws {
        let environment = Self.environment(database: Self.temporaryDatabase())
        // check: the overview lists the operator's commands
        let (status, overview) = try await Self.run(["--help"], environment: environment)
        #expect(status == 0, "\(overview)")
        for command in ["serve", "migrate", "push-test", "vapid", "sms-test", "email-test", "simulate", "categories", "workers"] {
            #expect(overview.contains(command), "\(command) is missing from --help")
        }
        // each command explains itself
        for (command, expected) in [
            ("migrate", "Applies pending database migrations"), ("push-test", "--instance-id"), ("push-test", "--webpush-subscription"),
            ("vapid", "generate"),
            ("simulate", "--vpn-login-id"), ("categories", "<action> <file>"), ("workers", "without the HTTP server"),
        ] {
            let (helpStatus, help) = try await Self.run([command, "--help"], environment: environment)
            #expect(helpStatus == 0, "\(command): \(help)")
            #expect(help.contains(expected), "\(command): \(help)")
        }
        // mistakes: one line on stderr, status 2
        for (arguments, expected) in [
            (["nosuch"], "error: Unexpected argument 'nosuch'"),
            (["categories"], "error: Missing expected argument '<action>'"),
            (["categories", "export", "x.json"], "error: categories knows only 'import'"),
            (["categories", "import", "/nonexistent/categories.json"], "error: cannot read /nonexistent/categories.json"),
            (["push-test"], "error: push-test needs one of --instance-id, --apns-token, --webpush-subscription"),
            (["push-test", "--instance-id", "a", "--apns-token", "b"], "error: push-test needs one of"),
            (["serve", "--no-workers", "--workers-only"], "error: --no-workers and --workers-only exclude each other"),
        ] {
            let (mistake, output) = try await Self.run(arguments, environment: environment)
            #expect(mistake == 2, "\(arguments): \(output)")
            #expect(output.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix(expected), "\(arguments): \(output)")
        }
    }

    /// issue 16 / threat model: `--help` is parsing, never configuration; a one-off command writes no secret and
    /// starts no background work.
    @Test func helpAndOneOffCommandsLeaveNoFilesBehind() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("yona-fresh-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // no YONA_* at all: the embedded default (./data/yona.sqlite, generated secrets) would write into `directory`
        let bare = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("YONA_") }.merging(["YONA_LOG_LEVEL": "warning"]) { $1 }
        for arguments in [["--help"], ["serve", "--help"], ["migrate", "--help"], ["workers", "--help"], ["push-test"], ["nosuch"]] {
            let (status, output) = try await Self.run(arguments, environment: bare, in: directory)
            #expect(status == 0 || status == 2, "\(arguments): \(output)")
            #expect(!output.contains("internal token"), "\(arguments) must not generate secrets: \(output)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "\(arguments) wrote files")
        }
        // a migration writes its database and nothing else: no secret is generated for a one-off command
        let database = directory.appendingPathComponent("db/yona.sqlite").path
        let (status, output) = try await Self.run(
            ["migrate"], environment: bare.merging(["YONA_DATABASE_URL": "sqlite://\(database)"]) { $1 },
            in: directory)
        #expect(status == 0, "\(output)")
        let written = try FileManager.default.subpathsOfDirectory(atPath: directory.path)
        #expect(!written.contains { $0.hasSuffix("internal-token") || $0.hasSuffix("recovery-key") }, "\(written)")
        #expect(written.contains("db/yona.sqlite"))
    }

    @Test func migrateAppliesWithoutAskingAndThenHasNothingToDo() async throws {
        let database = Self.temporaryDatabase()
        defer { try? FileManager.default.removeItem(atPath: database) }
        let (first, firstOutput) = try await Self.run(["migrate"], environment: Self.environment(database: database))
        #expect(first == 0, "\(firstOutput)")
        #expect(firstOutput.contains("migrations applied: \(YonaMigrations.count)"))
        let (second, secondOutput) = try await Self.run(["migrate"], environment: Self.environment(database: database))
        #expect(second == 0)
        #expect(secondOutput.contains("database is up to date"))
    }

    @Test func categoriesImportUpdatesByIdOrNameAndCreatesTheRest() async throws {
        try await withServer(.sqlite) { server in
            // setup: a file that renames Gambling in Dutch (by id) and adds Gaming (by name)
            let gambling = GoalsTests.gambling
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("categories-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data(
                """
                [{"id": "\(gambling)", "localizableName": {"en-US": "Gambling", "nl-NL": "Kansspelen"},
                  "smoothwallCategories": ["gambling", "lotto"], "applications": ["Poker App"]},
                 {"localizableName": {"en-US": "Gaming", "nl-NL": "Gamen"}, "localizableDescription": {"en-US": "Games"},
                  "smoothwallCategories": ["Games"], "mandatoryNoGo": false}]
                """.utf8
            ).write(to: file)
            // act
            let (status, output) = try await Self.run(
                ["categories", "import", file.path], environment: Self.environment(database: server.databaseLocation))
            // check
            #expect(status == 0, "\(output)")
            #expect(output.contains("categories imported: 1 created, 1 updated"))
            let dutch = try await server.request(.GET, "/activityCategories/\(gambling)", headers: [("Accept-Language", "nl-NL")])
            #expect(dutch.json["name"] as? String == "Kansspelen")
            let all = try await server.request(.GET, "/activityCategories/")
            let names = (value(all.json, "_embedded", "yona:activityCategories") as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            #expect(names.contains("Gaming"))
            // a bad entry stops the whole import, naming it
            let count = try await ActivityCategory.query(on: server.app.db).count()
            try Data(
                #"[{"localizableName": {"en-US": "Chess"}, "smoothwallCategories": ["chess"]}, {"localizableName": {"nl-NL": "Zonder Engels"}, "smoothwallCategories": []}]"#
                    .utf8
            ).write(to: file)
            let (bad, badOutput) = try await Self.run(
                ["categories", "import", file.path], environment: Self.environment(database: server.databaseLocation))
            #expect(bad == 2)
            #expect(badOutput.contains("entry 1 is not a valid category"), "\(badOutput)")
            #expect(try await ActivityCategory.query(on: server.app.db).count() == count)
        }
    }

    @Test func serveWorkersOnlyDrainsTheOutboxWithoutListening() async throws {
        try await withServer(.sqlite) { server in
            // setup: a conflict whose push waits in the outbox (the in-process server runs no workers)
            let user = try await server.createUser(extra: BuddyTests.phone("fiid-workers-only"))
            try await server.addNoGoGoal(user, category: GoalsTests.gambling)
            let (ua, index) = try await server.vpnLogin(user)
            try await server.postNetworkActivity(ua, deviceIndex: index, categories: ["gambling"], url: "https://poker.example")
            #expect(try await PendingPush.query(on: server.app.db).filter(\.$state == PendingPush.State.pending.rawValue).count() == 1)
            let port = try TestServerProbe.freePort()
            var environment = Self.environment(database: server.databaseLocation)
            environment["YONA_PUSH_WORKERS"] = "true"
            environment["YONA_PORT"] = String(port)
            // act
            let process = try ChildProcess.server(["serve", "--workers-only"], environment: environment)
            var sent = 0
            for _ in 0..<300 where sent == 0 {
                try await Task.sleep(for: .milliseconds(100))
                // a delivered row is deleted; a failed one would stay as 'failed'
                sent = try await PendingPush.query(on: server.app.db).count() == 0 ? 1 : 0
            }
            // check: delivered, no HTTP port, and a clean stop on SIGTERM
            #expect(sent == 1)
            #expect((try? await TestServerProbe.status("http://127.0.0.1:\(port)/health")) == nil, "workers-only must not listen")
            process.signal(SIGTERM)
            #expect(try await ExternalTool.detached { process.wait() } == 0)
        }
    }
}
