import Foundation
import Testing
import Vapor

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
        let base =
            ProcessInfo.processInfo.environment["YONA_CONSOLE_SCREENSHOTS"]
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("yona-console-\(UUID().uuidString)").path
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
            let scan = try await Self.browser(["scan", console, TestServer.internalToken, shots])
            let pages = try #require(scan["pages"] as? [String: String])
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
            for (path, html) in pages where path != "/admin/white-list" {
                #expect(!html.contains(newcomer) && !html.contains(parentNumber), "\(path) shows a number")
            }
            // the console is not on the public listener
            for path in ["/admin/", "/admin/sign-in", "/admin/white-list"] {
                #expect(try await server.request(.GET, path).status == 404, "\(path) on the public listener")
            }
        }
    }

    @Test(.enabled(if: runnable), arguments: TestDatabase.available)
    func anIdleSessionEndsAndSendsTheBrowserBackToSignIn(db: TestDatabase) async throws {
        try await Self.withConsole(db, adjust: { $0.consoleIdleTimeout = 2 }) { server, console in
            // act
            let report = try await Self.browser(["expire", console, TestServer.internalToken, "3.5"])
            // check
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
}
