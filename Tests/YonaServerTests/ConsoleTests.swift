import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import Vapor
import YonaObservability

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaDomain
@testable import YonaStore

/// The operator's console (docs/operations.md "The console"), driven in a real headless Chromium through Selenium
/// (`Fixtures/console_browser.py`): each page's main task end to end, the attacks on the session, and a scan of every
/// page for what the scenario's people are called, their numbers and addresses.
@Suite struct ConsoleTests {
    static var runnable: Bool { PythonClients.runnable }

    /// Where the screenshots go: `YONA_CONSOLE_SCREENSHOTS` (docs/console/ is made from it), else a temporary folder.
    static func screenshots(_ db: TestDatabase) throws -> String {
        let configured = ProcessInfo.processInfo.environment["YONA_CONSOLE_SCREENSHOTS"].flatMap { $0.isEmpty ? nil : $0 }
        let base = configured ?? FileManager.default.temporaryDirectory.appendingPathComponent("yona-console-\(UUID().uuidString)").path
        let folder = (base as NSString).appendingPathComponent(db.rawValue)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static func browser(_ arguments: [String]) async throws -> [String: Any] {
        try await PythonClients.run("console_browser.py", arguments)
    }

    static func seen(_ report: [String: Any], _ step: String, _ field: String) -> String? {
        value(report, step, field) as? String
    }

    /// A server with its own internal listener, where the console lives; `console` is that listener's base URL.
    static func withConsole(
        _ db: TestDatabase, adjust: (inout AppConfig) -> Void = { _ in }, _ body: (TestServer, String) async throws -> Void
    ) async throws {
        try await withServer(
            db,
            adjust: {
                $0.internalPort = 0
                adjust(&$0)
            }
        ) { server in
            try await body(server, try #require(server.internalBaseURL))
        }
    }

    @Test(.enabled(if: runnable), arguments: TestDatabase.available)
    func theOperatorsTasksWorkInABrowserAndNoPageShowsAPerson(db: TestDatabase) async throws {
        try await Self.withConsole(
            db,
            adjust: {
                $0.signUp.whiteListFreeSignUp = true
                $0.signUp.maxUsers = 4
            }
        ) { server, console in
            // setup: a white-listed parent with a phone, who invites a buddy by number and address
            let parentNumber = randomMobileNumber()
            let listed = try await server.request(
                .POST, console + "/admin/whiteListedNumbers/", headers: TestServer.bearer, json: ["mobileNumber": parentNumber])
            try #require(listed.status == 201, "\(listed.text)")
            let parent = try await server.createUser(
                firstName: "Wilhelmina", nickname: "Mientje", mobileNumber: parentNumber, extra: BuddyTests.phone("fiid-console-parent"))
            let buddyNumber = randomMobileNumber()
            let invited = try await server.request(
                .POST, "\(parent.path)/buddies/", headers: parent.passwordHeader,
                json: [
                    "_embedded": [
                        "yona:user": [
                            "firstName": "Bartholomeus", "lastName": "Kwakkelstein", "mobileNumber": buddyNumber,
                            "emailAddress": "bart.kwak@example.org",
                        ]
                    ],
                    "message": "Shall we?", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
                ])
            try #require(invited.status == 201, "\(invited.text)")
            let newcomer = randomMobileNumber()
            let shots = try Self.screenshots(db)

            // act: the operator's tasks in the browser
            let report = try await Self.browser([
                "act", console, TestServer.internalToken, shots, newcomer, "Console Hiking", "Wandelen", "Maintenance tonight",
            ])

            // check: signing in
            #expect(Self.seen(report, "unsigned", "path") == "/admin/sign-in", "no session: sent to sign in")
            #expect(Self.seen(report, "wrongToken", "error") == "That is not the internal token.")
            #expect(Self.seen(report, "signedIn", "h1") == "Dashboard")
            #expect(value(report, "cookie", "httpOnly") as? Bool == true)
            #expect(Self.seen(report, "cookie", "sameSite") == "Strict")
            // the white list: the number added in the browser signs up, another is refused with Yona's code
            #expect(Self.seen(report, "numberAdded", "notice") == "The number is on the white list.")
            #expect(Self.seen(report, "badNumber", "error")?.contains("is invalid") == true)
            let admitted = try await SignUpGateTests.signUp(server, newcomer)
            #expect(admitted.status == 201, "\(admitted.text)")
            let stranger = try await SignUpGateTests.signUp(server, randomMobileNumber())
            #expect(stranger.errorCode == "error.number.not.white.listed")
            // a category made in the browser is offered to the apps
            #expect(Self.seen(report, "categorySaved", "notice") == "The activity category is saved.")
            let offered = try await server.request(.GET, "/activityCategories/")
            let names = (value(offered.json, "_embedded", "yona:activityCategories") as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            #expect(names.contains("Console Hiking"), "\(names)")
            #expect(Self.seen(report, "categoryEdited", "notice") == "The activity category is saved.")
            let dutch = try await server.request(.GET, "/activityCategories/", headers: [("Accept-Language", "nl-NL")])
            let dutchNames = (value(dutch.json, "_embedded", "yona:activityCategories") as? [[String: Any]] ?? [])
                .compactMap { $0["name"] as? String }
            #expect(dutchNames.contains("Wandelen en klimmen"), "the edit made in the browser: \(dutchNames)")
            #expect(Self.seen(report, "imported", "notice") == "The activity categories are imported.")
            #expect(names.contains("Imported Birding"), "\(names)")
            #expect(Self.seen(report, "badImport", "error")?.hasPrefix("Nothing was imported: entry 0") == true)
            // an announcement sent from the browser reaches the parent's inbox and phone
            #expect(Self.seen(report, "announcementSent", "notice") == "The announcement is on its way.")
            #expect((report["previewText"] as? String)?.contains("Vannacht onderhoud") == true)
            try await AnnouncementTests.fanOut(server)
            try await server.app.pushDispatcher.drainOnce()
            let announcement = try #require(try await AnnouncementTests.systemMessages(server, parent).first)
            #expect(announcement["message"] as? String == "Maintenance tonight")
            let push = try await server.request(.GET, "/test/firebase/messages/last/fiid-console-parent")
            #expect(value(push.json, "data", "messageId") as? String == String(announcement["messageId"] as? Int ?? -1))
            // the attack: a form without the CSRF token changes nothing
            #expect(Self.seen(report, "withoutCSRF", "h1") == "Refused")
            let numbers = try await WhiteList(db: server.app.db).numbers()
            #expect(!numbers.contains("+31699999999"))
            // signing out ends the session
            #expect(Self.seen(report, "signedOut", "notice") == "You are signed out.")
            #expect(Self.seen(report, "afterSignOut", "path") == "/admin/sign-in")
            // the cap: parent, invited buddy and newcomer are three of four; the fourth place goes, then no more
            let whiteListing = try await server.request(
                .POST, console + "/admin/whiteListedNumbers/", headers: TestServer.bearer, json: ["mobileNumber": "+31688887777"])
            #expect(whiteListing.status == 201)
            #expect(try await SignUpGateTests.signUp(server, "+31688887777").status == 201)
            _ = try await server.request(
                .POST, console + "/admin/whiteListedNumbers/", headers: TestServer.bearer, json: ["mobileNumber": "+31688886666"])
            #expect(try await SignUpGateTests.signUp(server, "+31688886666").errorCode == "error.user.maximum.number.reached")

            // act: every page after the whole scenario
            let scan = try await Self.browser(["scan", console, TestServer.internalToken, shots, parentNumber])
            let pages = try #require(scan["pages"] as? [String: String])
            #expect(Self.seen(scan, "expired", "notice") == "The announcement is expired.")
            #expect(try await AnnouncementTests.systemMessages(server, parent).isEmpty, "expired early: gone from the inbox at once")
            // the lost-phone request made in the browser stored the code the new phone now uses (test server: 1234)
            #expect(Self.seen(scan, "lostPhone", "notice") == "If the number has an account, its owner gets a code by text.")
            let overwritten = try await OverwriteTests.overwrite(server, parentNumber)
            #expect(overwritten.status == 201, "\(overwritten.text)")
            #expect(pages.count == 5)
            let secrets = [
                "Wilhelmina", "Mientje", "Bartholomeus", "Kwakkelstein", "bart.kwak@example.org", "example.org", buddyNumber,
                String(buddyNumber.dropFirst()), parent.password, TestServer.internalToken,
            ]
            for (path, html) in pages {
                for secret in secrets { #expect(!html.contains(secret), "\(path) shows \(secret)") }
                #expect(value(scan, "unlabeled", path) as? [String] == [], "\(path) has a field without a label")
            }
            // the white-listed numbers are the only numbers shown, and only on the white-list page
            #expect(pages["/admin/white-list"]?.contains(newcomer) == true)
            #expect(pages["/admin/"]?.contains("<td class=\"n\">4</td>") == true, "the dashboard counts the four accounts")
            #expect(pages["/admin/"]?.contains("Nearing the maximum number of users") == true)
            #expect(pages["/admin/"]?.contains("<svg role=\"img\" aria-label=\"pushes sent: 1 in the last hour") == true, "the chart of the push")
            for (path, html) in pages where path != "/admin/white-list" {
                #expect(!html.contains(newcomer) && !html.contains(parentNumber), "\(path) shows a number")
            }
            // the console is not on the public listener
            for path in ["/admin/", "/admin/sign-in", "/admin/white-list"] {
                #expect(try await server.request(.GET, path).status == 404, "\(path) on the public listener")
            }
        }
    }

    /// The session is aged in the table while the browser waits on the dashboard (the default 30 minutes, passed
    /// without waiting them out; a short real timeout expired before the dashboard loaded when the suite was busy).
    @Test(.enabled(if: runnable), arguments: TestDatabase.available)
    func anIdleSessionEndsAndSendsTheBrowserBackToSignIn(db: TestDatabase) async throws {
        try await Self.withConsole(db) { server, console in
            // act: sign in; once the dashboard has been served, the session's last request is 31 minutes ago
            async let browsing = Self.browser(["expire", console, TestServer.internalToken, "15"])
            var aged = false
            for _ in 0..<600 where !aged {
                if let session = try await ConsoleSession.query(on: server.app.db).first(), session.lastSeenAt > session.createdAt {
                    session.lastSeenAt = Date().addingTimeInterval(-31 * 60)
                    try await session.save(on: server.app.db)
                    aged = true
                } else {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            let report = try await browsing
            // check
            #expect(aged, "the dashboard was served within a minute")
            #expect(Self.seen(report, "before", "h1") == "Dashboard")
            #expect(Self.seen(report, "after", "path") == "/admin/sign-in")
            #expect(Self.seen(report, "after", "notice") == "Your session ended; sign in again.")
            #expect(try await ConsoleSession.query(on: server.app.db).count() == 0, "the ended session is gone")
        }
    }

    /// The attack: guessing the token from one address. The eleventh attempt in 15 minutes is refused before the
    /// token is compared, so the right token then fails too.
    @Test(arguments: TestDatabase.available)
    func signInAttemptsAreLimitedPerAddress(db: TestDatabase) async throws {
        try await Self.withConsole(db) { server, console in
            // act
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for guess in 0..<ConsoleController.signInLimit.max {
                    group.addTask {
                        try await server.request(
                            .POST, console + "/admin/sign-in", body: Data("token=guess\(guess)".utf8),
                            contentType: "application/x-www-form-urlencoded"
                        ).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            let right = try await server.request(
                .POST, console + "/admin/sign-in", body: Data("token=\(TestServer.internalToken)".utf8),
                contentType: "application/x-www-form-urlencoded")
            // check
            #expect(statuses.allSatisfy { $0 == 401 }, "\(statuses)")
            #expect(right.status == 429)
            #expect(right.headers.first(name: "Retry-After") != nil)
            #expect(right.headers.first(name: "Set-Cookie") == nil)
            #expect(try await ConsoleSession.query(on: server.app.db).count() == 0)
        }
    }

    /// The charts' counts come from every instance: two processes' tallies of one minute add up in the table.
    @Test(arguments: TestDatabase.available)
    func deliveriesCountedByTwoInstancesAddUpPerMinute(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let now = Date()
            let first = MinuteTallies()
            let second = MinuteTallies()
            // act
            first.add("pushes sent", 3, now: now)
            second.add("pushes sent", 2, now: now)
            second.add("pushes failed: UNREGISTERED", now: now.addingTimeInterval(-120))
            try await first.flush(on: server.app.db, now: now)
            try await second.flush(on: server.app.db, now: now)
            try await first.flush(on: server.app.db, now: now)
            // check
            let history = try await MinuteTallies.history(on: server.app.db, now: now)
            #expect(history["pushes sent"]?.last == 5)
            #expect(history["pushes sent"]?.reduce(0, +) == 5, "a second flush adds nothing twice")
            #expect(history["pushes failed: UNREGISTERED"]?[57] == 1, "two minutes before the last")
        }
    }

    /// An export imports back unchanged: the console's download is the `categories import` format.
    @Test(arguments: TestDatabase.available)
    func anExportImportsBackUnchanged(db: TestDatabase) async throws {
        try await Self.withConsole(db) { server, console in
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
            defer { _ = client.shutdown() }
            func send(_ method: HTTPMethod, _ path: String, cookie: String? = nil, form: String? = nil) async throws -> HTTPClientResponse {
                var request = HTTPClientRequest(url: console + path)
                request.method = method
                if let cookie { request.headers.add(name: "Cookie", value: cookie) }
                if let form {
                    request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                    request.body = .bytes(ByteBuffer(string: form))
                }
                return try await client.execute(request, timeout: .seconds(90))
            }
            // setup: a session, as a browser gets one
            let signedIn = try await send(.POST, "/admin/sign-in", form: "token=\(TestServer.internalToken)")
            let cookie = try #require(signedIn.headers.first(name: "Set-Cookie")?.split(separator: ";").first.map(String.init))
            let token = String(cookie.dropFirst("yona_console=".count))
            let before = try await ActivityCategory.query(on: server.app.db).all()
            // act
            let export = try await send(.GET, "/admin/categories/export", cookie: cookie)
            let exported = Data(try await export.body.collect(upTo: 1 << 20).readableBytesView)
            let json = String(decoding: exported, as: UTF8.self).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let imported = try await send(
                .POST, "/admin/categories/import", cookie: cookie, form: "csrf=\(ConsoleSessions.csrfToken(for: token))&json=\(json)")
            let nul = try await send(
                .POST, "/admin/white-list", cookie: cookie, form: "csrf=\(ConsoleSessions.csrfToken(for: token))&mobileNumber=%2B31%006")
            // check
            #expect(nul.status == .badRequest, "a NUL in a form is refused before it reaches the store")
            #expect(signedIn.status == .seeOther)
            #expect(export.status == .ok)
            #expect(export.headers.first(name: "Content-Disposition")?.hasPrefix("attachment") == true)
            #expect((try JSONSerialization.jsonObject(with: exported) as? [Any])?.count == before.count)
            #expect(imported.status == .seeOther)
            #expect(imported.headers.first(name: "Location") == "/admin/categories?notice=categories-imported")
            let after = try await ActivityCategory.query(on: server.app.db).all()
            #expect(after.count == before.count)
            for category in before {
                let twin = after.first { $0.id == category.id }
                #expect(twin?.names == category.names && twin?.classifierCategories == category.classifierCategories)
                #expect(twin?.applications == category.applications && twin?.mandatoryNoGo == category.mandatoryNoGo)
            }
        }
    }
}
