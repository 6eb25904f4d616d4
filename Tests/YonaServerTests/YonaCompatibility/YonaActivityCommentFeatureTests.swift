import Foundation
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer

/// Yona's `ActivityCommentTest.groovy`: buddies comment on each other's days and weeks and reply in threads.
@Suite struct YonaActivityCommentFeatureTests {
    typealias A = YonaActivityFeatureTests

    /// Richard and Bob, buddies who share, each with a phone whose pushes the test server records.
    static func buddies(_ server: TestServer) async throws -> (richard: YonaApp, bob: YonaApp) {
        let richardUser = try await server.createUser(firstName: "Richard", nickname: "RQ", extra: BuddyTests.phone("fiid-comment-richard"))
        let bobUser = try await server.createUser(firstName: "Bob", nickname: "BD", extra: BuddyTests.phone("fiid-comment-bob"))
        try await BuddyTests.connect(server, richard: richardUser, bob: bobUser)
        _ = try await server.messages(richardUser)
        let richard = try await YonaApp(server: server, json: [:], password: richardUser.password)
            .reloaded(from: "\(server.baseURL)\(richardUser.profilePath)")
        let bob = try await YonaApp(server: server, json: [:], password: bobUser.password).reloaded(from: "\(server.baseURL)\(bobUser.profilePath)")
        return (richard, bob)
    }

    static func buddy(_ server: TestServer, of app: YonaApp) async throws -> [String: Any] {
        let list = try await A.get(server, value(app.json, "_embedded", "yona:buddies", "_links", "self", "href") as? String, app)
        return try #require((value(list, "_embedded", "yona:buddies") as? [[String: Any]])?.first)
    }

    static func messages(_ server: TestServer, _ href: String?, _ app: YonaApp) async throws -> (page: [String: Any], items: [[String: Any]]) {
        let page = try await A.get(server, href, app, query: "?size=4")
        return (page, value(page, "_embedded", "yona:messages") as? [[String: Any]] ?? [])
    }

    static func links(_ message: [String: Any]) -> Set<String> {
        Set((message["_links"] as? [String: Any] ?? [:]).keys).subtracting(["curies"])
    }

    static func href(_ message: [String: Any], _ rel: String) -> String? { value(message, "_links", rel, "href") as? String }

    @Test(arguments: TestDatabase.available)
    func activityCommentTestCommentOnBuddyDayActivityAndReplyInAThread(db: TestDatabase) async throws {
        try await withServer(db, adjust: { $0.push.workersEnabled = true }) { server in
            // setup: Richard opens today's gambling day of his buddy Bob
            let (richard, bob) = try await Self.buddies(server)
            let buddy = try await Self.buddy(server, of: richard)
            let days = try await A.get(server, Self.href(buddy, "yona:dailyActivityReports"), richard)
            let today = try #require(A.items(days, "yona:dayActivityOverviews").first)
            let bobDay = try #require((today["dayActivities"] as? [[String: Any]])?.first)
            let details = try await A.get(server, Self.href(bobDay, "yona:dayDetails"), richard)
            let detailsHref = try #require(Self.href(details, "self"))
            try #require(Self.href(details, "yona:addComment") != nil)
            // the pushes of becoming buddies have gone out; forget them
            for _ in 0..<100 where try await server.request(.GET, "/test/firebase/messages/last/fiid-comment-richard").status != 200 {
                try await Task.sleep(for: .milliseconds(50))
            }
            try await PushTests.drained(server)
            for phone in ["fiid-comment-richard", "fiid-comment-bob"] {
                _ = try await server.request(.DELETE, "/test/firebase/messages/last/\(phone)")
            }

            // act: Richard comments
            let posted = try await server.request(
                .POST, try #require(Self.href(details, "yona:addComment")), headers: richard.headers, json: ["message": "You're quiet!"])

            // check: the answer is Richard's own copy, and only Bob's phone is told
            #expect(posted.status == 200, "\(posted.text)")
            let own = posted.json
            #expect(own["@type"] as? String == "ActivityCommentMessage" && own["nickname"] as? String == "RQ (me)")
            #expect(own["message"] as? String == "You're quiet!" && own["isRead"] as? Bool == false)
            #expect(Self.links(own) == ["self", "edit", "yona:user", "yona:markRead", "yona:threadHead", "yona:dayDetails"])
            #expect(Self.href(own, "yona:dayDetails") == detailsHref && Self.href(own, "yona:threadHead") == Self.href(own, "self"))
            // as Yona's test asks, straight after the comment: clearing the commenter's last push finds none (404),
            // Bob's finds the one about the comment (200)
            #expect(
                try await server.request(.DELETE, "/test/firebase/messages/last/fiid-comment-richard").status == 404, "the commenter's is not told")
            let cleared = try await server.request(.DELETE, "/test/firebase/messages/last/fiid-comment-bob")
            #expect(cleared.status == 200 && value(cleared.json, "data", "messageId") != nil, "Bob's phone is told: \(cleared.text)")
            #expect(try await server.request(.GET, "/test/firebase/messages/last/fiid-comment-bob").status == 404, "and forgotten")
            let richardThread = try await Self.messages(server, Self.href(details, "yona:messages"), richard)
            #expect(richardThread.items.count == 1 && value(richardThread.page, "page", "totalElements") as? Int == 1)

            // Bob sees it on his own day, which takes no new comment, and replies
            let ownDays = try await A.get(server, bob.link("yona:dailyActivityReports"), bob)
            let ownDay = try #require((A.items(ownDays, "yona:dayActivityOverviews").first?["dayActivities"] as? [[String: Any]])?.first)
            let ownDetails = try await A.get(server, Self.href(ownDay, "yona:dayDetails"), bob)
            #expect(Self.href(ownDetails, "yona:addComment") == nil)
            let bobThread = try await Self.messages(server, Self.href(ownDetails, "yona:messages"), bob)
            let received = try #require(bobThread.items.first)
            #expect(received["nickname"] as? String == "RQ" && received["message"] as? String == "You're quiet!")
            #expect(
                Self.links(received) == [
                    "self", "edit", "yona:user", "yona:markRead", "yona:threadHead", "yona:dayDetails", "yona:buddy", "yona:reply",
                ])
            #expect(Self.href(received, "yona:dayDetails") == Self.href(ownDetails, "self"))
            // a reply without its text: Yona's code for an action missing a property, and nothing is sent
            let textless = try await server.request(
                .POST, try #require(Self.href(received, "yona:reply")), headers: bob.headers, json: ["properties": [String: Any]()])
            #expect(textless.status == 400 && textless.errorCode == "error.message.action.missing.property", "\(textless.text)")
            #expect((textless.json["message"] as? String)?.contains("'message'") == true)
            let replied = try await server.request(
                .POST, try #require(Self.href(received, "yona:reply")), headers: bob.headers, json: ["properties": ["message": "My battery died :)"]])
            #expect(replied.status == 200 && value(replied.json, "properties", "status") as? String == "done", "\(replied.text)")
            let reply = try #require((value(replied.json, "_embedded", "yona:affectedMessages") as? [[String: Any]])?.first)
            #expect(reply["nickname"] as? String == "BD (me)" && Self.href(reply, "yona:repliedMessage") == Self.href(received, "self"))
            #expect(Self.href(reply, "yona:threadHead") == Self.href(received, "self"))

            // Richard's thread: his comment, then Bob's reply to it; his inbox shows only what he received
            let both = try await Self.messages(server, Self.href(details, "yona:messages"), richard)
            #expect(both.items.map { $0["message"] as? String } == ["You're quiet!", "My battery died :)"])
            #expect(Self.href(both.items[1], "yona:threadHead") == Self.href(both.items[0], "self"))
            #expect(Self.href(both.items[1], "yona:repliedMessage") == Self.href(both.items[0], "self"))
            let inbox = try await A.get(server, richard.link("yona:messages"), richard)
            let comments = (value(inbox, "_embedded", "yona:messages") as? [[String: Any]] ?? []).filter {
                $0["@type"] as? String == "ActivityCommentMessage"
            }
            #expect(comments.map { $0["message"] as? String } == ["My battery died :)"])

            // too long is refused with Yona's text; deleting the head takes the thread from both inboxes
            let long = try await server.request(
                .POST, try #require(Self.href(details, "yona:addComment")), headers: richard.headers,
                json: ["message": String(repeating: "*", count: 201)])
            #expect(long.status == 400 && long.errorCode == "error.invalid.string.too.long")
            #expect(long.json["message"] as? String == "The string 'message' is too long. It contains 201 characters while only 200 are allowed")
            let deleted = try await server.request(.DELETE, try #require(Self.href(both.items[0], "edit")), headers: richard.headers)
            #expect(deleted.status == 200)
            #expect(try await Self.messages(server, Self.href(details, "yona:messages"), richard).items.isEmpty)
            #expect(try await Self.messages(server, Self.href(ownDetails, "yona:messages"), bob).items.isEmpty)
        }
    }

    /// Yona works a comment's day link out from the day on every read. When the goal changes, the days before the
    /// change move to the goal's earlier version (a history item with an id of its own), and the link follows: it
    /// had kept naming the version commented on, which then answered `error.activity.date.goal.mismatch`.
    @Test(arguments: TestDatabase.available)
    func aCommentsDayLinkFollowsTheGoalVersionInForceAfterAChange(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: both accounts and the relation date from three days ago (Yona's test server), Bob has had a social
            // budget since then, and Richard comments on Bob's yesterday
            var (richard, bob) = try await Self.buddies(server)
            let threeDaysAgo = UserCalendar.adding(days: -3, to: UserCalendar.startOfDay(Date())).addingTimeInterval(3600)
            richard = try await A.date(server, richard, to: threeDaysAgo)
            bob = try await A.date(server, bob, to: threeDaysAgo)
            let goalHref = try await A.addGoal(
                server, bob, ["@type": "BudgetGoal", "maxDurationMinutes": 60, "_links": GoalsTests.categoryLink(server, GoalsTests.social)],
                at: threeDaysAgo)
            let goalID = try #require(URLComponents(string: goalHref)?.path.split(separator: "/").last.map(String.init))
            let days = try await A.get(server, Self.href(try await Self.buddy(server, of: richard), "yona:dailyActivityReports"), richard)
            let yesterday = try #require(A.items(days, "yona:dayActivityOverviews").dropFirst().first?["dayActivities"] as? [[String: Any]])
            let socialDay = try #require(yesterday.first { Self.href($0, "yona:goal")?.contains(goalID) == true })
            let details = try await A.get(server, Self.href(socialDay, "yona:dayDetails"), richard)
            let posted = try await server.request(
                .POST, try #require(Self.href(details, "yona:addComment")), headers: richard.headers, json: ["message": "Enough yesterday?"])
            try #require(posted.status == 200, "\(posted.text)")
            #expect(Self.href(posted.json, "yona:dayDetails") == Self.href(details, "self"))

            // act: Bob lowers the budget today
            let changed = try await server.request(
                .PUT, goalHref, headers: bob.headers,
                json: ["@type": "BudgetGoal", "maxDurationMinutes": 30, "_links": GoalsTests.categoryLink(server, GoalsTests.social)])
            try #require(changed.status == 200, "\(changed.text)")

            // check: both copies' day links open yesterday's details under the earlier version, with the thread
            let own = try await A.get(server, Self.href(posted.json, "self"), richard)
            let inbox = try await A.get(server, bob.link("yona:messages"), bob)
            let received = try #require(A.items(inbox, "yona:messages").first { $0["@type"] as? String == "ActivityCommentMessage" })
            for (message, app) in [(own, richard), (received, bob)] {
                let day = try await A.get(server, Self.href(message, "yona:dayDetails"), app)
                #expect(Self.href(day, "yona:goal")?.contains(goalID) == false, "the earlier version has an id of its own: \(day)")
                let thread = try await Self.messages(server, Self.href(day, "yona:messages"), app)
                #expect(thread.items.map { $0["message"] as? String } == ["Enough yesterday?"])
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func activityCommentTestCommentOnInactiveWeekAndOnlyOnABuddysDetails(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let (richard, bob) = try await Self.buddies(server)
            let buddy = try await Self.buddy(server, of: richard)
            let weeks = try await A.get(server, Self.href(buddy, "yona:weeklyActivityReports"), richard)
            let week = try #require((A.items(weeks, "yona:weekActivityOverviews").first?["weekActivities"] as? [[String: Any]])?.first)
            let details = try await A.get(server, Self.href(week, "yona:weekDetails"), richard)
            let posted = try await server.request(
                .POST, try #require(Self.href(details, "yona:addComment")), headers: richard.headers, json: ["message": "You're quiet!"])
            #expect(posted.status == 200, "\(posted.text)")
            #expect(Self.href(posted.json, "yona:weekDetails") == Self.href(details, "self"))
            // one's own details take no new comment
            let ownWeeks = try await A.get(server, bob.link("yona:weeklyActivityReports"), bob)
            let ownWeek = try #require((A.items(ownWeeks, "yona:weekActivityOverviews").first?["weekActivities"] as? [[String: Any]])?.first)
            let ownMessages = "\(try #require(Self.href(ownWeek, "yona:weekDetails")))/messages/"
            let refused = try await server.request(.POST, ownMessages, headers: bob.headers, json: ["message": "Me"])
            #expect(refused.status == 405, "\(refused.status) \(refused.text)")
            #expect(try await Self.messages(server, ownMessages, bob).items.first?["nickname"] as? String == "RQ")
        }
    }

    @Test(arguments: TestDatabase.available)
    func activityCommentTestCommentsOfBuddiesOfBuddyAreNotVisibleAndThreadsStayInOrder(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: Richard is buddy of Bob and of Bea; both open Richard's day
            let richardUser = try await server.createUser(firstName: "Richard", nickname: "RQ")
            let bobUser = try await server.createUser(firstName: "Bob", nickname: "BD")
            let beaUser = try await server.createUser(firstName: "Bea", nickname: "BDD")
            try await BuddyTests.connect(server, richard: bobUser, bob: richardUser)
            _ = try await server.messages(bobUser)
            try await BuddyTests.connect(server, richard: beaUser, bob: richardUser)
            _ = try await server.messages(beaUser)
            func app(_ user: TestUser) async throws -> YonaApp {
                try await YonaApp(server: server, json: [:], password: user.password).reloaded(from: "\(server.baseURL)\(user.profilePath)")
            }
            let (richard, bob, bea) = (try await app(richardUser), try await app(bobUser), try await app(beaUser))
            func richardsDay(as viewer: YonaApp) async throws -> [String: Any] {
                let buddy = try await Self.buddy(server, of: viewer)
                let days = try await A.get(server, Self.href(buddy, "yona:dailyActivityReports"), viewer)
                let day = try #require((A.items(days, "yona:dayActivityOverviews").first?["dayActivities"] as? [[String: Any]])?.first)
                return try await A.get(server, Self.href(day, "yona:dayDetails"), viewer)
            }
            let (bobView, beaView) = (try await richardsDay(as: bob), try await richardsDay(as: bea))
            for (view, app, text) in [(bobView, bob, "Hi buddy! How ya doing?"), (beaView, bea, "Hi Richard! Everything alright?")] {
                let posted = try await server.request(
                    .POST, try #require(Self.href(view, "yona:addComment")), headers: app.headers, json: ["message": text])
                #expect(posted.status == 200)
            }
            let ownDays = try await A.get(server, richard.link("yona:dailyActivityReports"), richard)
            let ownDay = try #require((A.items(ownDays, "yona:dayActivityOverviews").first?["dayActivities"] as? [[String: Any]])?.first)
            let ownDetails = try await A.get(server, Self.href(ownDay, "yona:dayDetails"), richard)

            // act: Richard answers both, Bob answers Richard
            let both = try await Self.messages(server, Self.href(ownDetails, "yona:messages"), richard).items
            #expect(both.map { $0["nickname"] as? String } == ["BD", "BDD"])
            for (message, text) in [(both[0], "Hi Bob! Doing fine!"), (both[1], "Hi Bea! I'm alright!")] {
                let replied = try await server.request(
                    .POST, try #require(Self.href(message, "yona:reply")), headers: richard.headers, json: ["properties": ["message": text]])
                #expect(replied.status == 200)
            }
            let bobThread = try await Self.messages(server, Self.href(bobView, "yona:messages"), bob).items
            let answer = try #require(bobThread.last)
            let again = try await server.request(
                .POST, try #require(Self.href(answer, "yona:reply")), headers: bob.headers, json: ["properties": ["message": "Great buddy!"]])
            #expect(again.status == 200)

            // check: each sees only the threads they are in; Richard sees whole threads in the order they began
            #expect(
                try await Self.messages(server, Self.href(beaView, "yona:messages"), bea).items.map { $0["message"] as? String } == [
                    "Hi Richard! Everything alright?", "Hi Bea! I'm alright!",
                ])
            let all = try await A.get(server, Self.href(ownDetails, "yona:messages"), richard, query: "?size=10")
            let ordered = (value(all, "_embedded", "yona:messages") as? [[String: Any]] ?? []).map {
                "\($0["nickname"] ?? ""): \($0["message"] ?? "")"
            }
            #expect(
                ordered == [
                    "BD: Hi buddy! How ya doing?", "RQ (me): Hi Bob! Doing fine!", "BD: Great buddy!",
                    "BDD: Hi Richard! Everything alright?", "RQ (me): Hi Bea! I'm alright!",
                ])

            // Richard deletes his own answer to Bob: Bob's reply to it goes too, in both inboxes
            let mine = try #require((value(all, "_embedded", "yona:messages") as? [[String: Any]])?[1])
            #expect(try await server.request(.DELETE, try #require(Self.href(mine, "edit")), headers: richard.headers).status == 200)
            #expect(
                try await Self.messages(server, Self.href(bobView, "yona:messages"), bob).items.map { $0["message"] as? String } == [
                    "Hi buddy! How ya doing?"
                ])
            let left = try await A.get(server, Self.href(ownDetails, "yona:messages"), richard, query: "?size=10")
            #expect((value(left, "_embedded", "yona:messages") as? [Any])?.count == 3)
        }
    }
}
