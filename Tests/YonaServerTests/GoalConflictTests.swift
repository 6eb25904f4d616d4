import Fluent
import Foundation
import NIOCore
import SQLKit
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// api.md "The analyzer API" and "Messages": a visit to a danger zone raises a goal conflict.
@Suite struct GoalConflictTests {
    static let gambling = GoalsTests.gambling
    static let news = GoalsTests.news

    @Test(arguments: TestDatabase.available)
    func aVisitToADangerZoneRemindsTheUserWithTheURL(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: a young user with a danger zone on gambling and a phone with an Instance ID
            let user = try await server.createUser(
                nickname: "Robin",
                extra: [
                    "deviceName": "Phone", "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "1.0",
                    "deviceAppVersionCode": 1, "deviceFirebaseInstanceId": "fiid-robin",
                ])
            try await server.addNoGoGoal(user, category: Self.gambling)
            let (ua, index) = try await server.vpnLogin(user)
            let visit = Date().addingTimeInterval(-3600)

            // act: the classifier reports a poker site
            let posted = try await server.postNetworkActivity(
                ua, deviceIndex: index, categories: ["gambling"],
                url: "https://poker.example/table/7", at: visit)

            // check
            #expect(posted.status == 204, "\(posted.text)")
            let messages = try await server.messages(user)
            #expect(messages.count == 1)
            let conflict = try #require(messages.first)
            #expect(conflict["@type"] as? String == "GoalConflictMessage")
            #expect(conflict["nickname"] as? String == "Robin (me)")
            #expect(conflict["url"] as? String == "https://poker.example/table/7")
            #expect(conflict["status"] as? String == "ANNOUNCED")
            #expect(conflict["isRead"] as? Bool == false)
            #expect(conflict["activityStartTime"] as? String == YonaDateFormat.timestamp(visit))
            #expect((value(conflict, "_links", "yona:activityCategory", "href") as? String)?.hasSuffix(Self.gambling) == true)
            let messageID = try #require(conflict["messageId"] as? Int)
            #expect(messageID > 0 && messageID < 1 << 53)
            #expect((value(conflict, "_links", "self", "href") as? String)?.hasSuffix("/messages/\(messageID)") == true)
            // the push is queued in the same transaction, one per device with an Instance ID
            let queued = try await PendingPush.query(on: server.app.db).all()
            #expect(queued.map(\.messageID) == [Int64(messageID)])
            // the user-less URL a push carries gives the same message
            let userless = try await server.request(.GET, "/messages/\(messageID)?requestingUserId=\(user.id)", headers: user.passwordHeader)
            #expect(userless.status == 200)
            #expect(userless.json["url"] as? String == "https://poker.example/table/7")
            #expect(userless.json["messageId"] as? Int == messageID)
        }
    }

    @Test(arguments: TestDatabase.available)
    func onlyNewActivityOnANoGoGoalThatExistedRaisesAConflict(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            try await server.addNoGoGoal(user, category: Self.news, since: Date().addingTimeInterval(-7200))
            let (ua, _) = try await server.vpnLogin(user)
            let t0 = Date().addingTimeInterval(-5400)
            // before the goal existed: nothing
            try await server.postNetworkActivity(ua, categories: ["news/media"], url: "https://a.example", at: Date().addingTimeInterval(-9000))
            #expect(try await server.messages(user).isEmpty)
            // a category without a no-go goal: nothing
            try await server.postNetworkActivity(ua, categories: ["YouTube"], url: "https://video.example", at: t0)
            #expect(try await server.messages(user).isEmpty)
            // the first visit raises one, a visit a minute later raises nothing new
            try await server.postNetworkActivity(ua, categories: ["news/media"], url: "https://b.example", at: t0)
            try await server.postNetworkActivity(ua, categories: ["News"], url: "https://c.example", at: t0.addingTimeInterval(60))
            #expect(try await server.messages(user).count == 1)
            // 20 minutes after the end: a new conflict; then a late event in between merges (out of order)
            try await server.postNetworkActivity(
                ua, categories: ["news/media"], url: "https://d.example", at: t0.addingTimeInterval(60 + 60 + 20 * 60))
            try await server.postNetworkActivity(ua, categories: ["news/media"], url: "https://e.example", at: t0.addingTimeInterval(10 * 60))
            let messages = try await server.messages(user)
            #expect(messages.map { $0["url"] as? String } == ["https://d.example", "https://b.example"])
        }
    }

    @Test(arguments: TestDatabase.available)
    func appActivityFollowsTheSameRulesWithThePhonesClockCorrected(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser(nickname: "Robin")
            try await server.addNoGoGoal(user, category: Self.gambling)
            let (deviceID, _) = try await DevicesTests.firstDevice(server, user)
            // the phone's clock runs an hour behind
            let phoneNow = Date().addingTimeInterval(-3600)
            let start = phoneNow.addingTimeInterval(-600)
            let posted = try await server.request(
                .POST, "\(user.path)/devices/\(deviceID)/appActivity/", headers: user.passwordHeader,
                json: [
                    "deviceDateTime": YonaDateFormat.timestamp(phoneNow),
                    "activities": [
                        [
                            "application": "Poker App", "startTime": YonaDateFormat.timestamp(start),
                            "endTime": YonaDateFormat.timestamp(start.addingTimeInterval(300)),
                        ],
                        [
                            "application": "Calculator", "startTime": YonaDateFormat.timestamp(start),
                            "endTime": YonaDateFormat.timestamp(start.addingTimeInterval(300)),
                        ],
                    ],
                ])
            #expect(posted.status == 204, "\(posted.text)")
            let messages = try await server.messages(user)
            #expect(messages.count == 1)
            let conflict = try #require(messages.first)
            #expect(conflict["nickname"] as? String == "Robin (me)")
            let reported = try #require((conflict["activityStartTime"] as? String).flatMap(YonaDateFormat.parseTimestamp))
            #expect(abs(reported.timeIntervalSince(start.addingTimeInterval(3600))) < 5, "corrected by the phone's offset")
            let noPassword = try await server.request(
                .POST, "\(user.path)/devices/\(deviceID)/appActivity/", json: ["deviceDateTime": "x", "activities": []])
            #expect(noPassword.errorCode == "error.missing.password.header")
        }
    }

    @Test(arguments: TestDatabase.available)
    func analyzerErrorsAndIdempotency(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            try await server.addNoGoGoal(user, category: Self.gambling)
            let (ua, _) = try await server.vpnLogin(user)
            let noToken = try await server.postNetworkActivity(ua, categories: ["gambling"], url: "https://x.example", bearer: [])
            #expect(noToken.status == 401)
            let unknownUser = try await server.postNetworkActivity(UUID().uuidString, categories: ["gambling"], url: "https://x.example")
            #expect(unknownUser.status == 400)
            #expect(unknownUser.errorCode == "error.user.not.found.id")
            let unknownDevice = try await server.postNetworkActivity(ua, deviceIndex: 7, categories: ["gambling"], url: "https://x.example")
            #expect(unknownDevice.status == 404)
            #expect(unknownDevice.errorCode == "error.device.not.found.id")
            let future = try await server.postNetworkActivity(
                ua, categories: ["gambling"], url: "https://x.example", at: Date().addingTimeInterval(60))
            #expect(future.errorCode == "error.analysis.invalid.event.time")
            let malformed = try await server.request(
                .POST, "/userAnonymized/nope/networkActivity/", headers: TestServer.bearer,
                json: ["deviceIndex": 0, "categories": ["gambling"]])
            #expect(malformed.errorCode == "error.invalid.uuid")
            #expect(try await server.messages(user).isEmpty)
            // the same key twice, even hours apart, is one event
            let long = "https://poker.example/" + String(repeating: "p", count: 3000)
            for hoursAgo in [5.0, 2.0] {
                let posted = try await server.postNetworkActivity(
                    ua, categories: ["gambling"], url: long,
                    at: Date().addingTimeInterval(-hoursAgo * 3600), idempotencyKey: "evt-1")
                #expect(posted.status == 204)
            }
            let messages = try await server.messages(user)
            #expect(messages.count == 1)
            #expect((messages.first?["url"] as? String)?.count == 2048)
            // keys are remembered for a week, then forgotten: the same key counts again
            try await AnalysisService.purgeIdempotencyKeys(on: server.app.db)
            #expect(try await ProcessedAnalyzerEvent.query(on: server.app.db).count() == 1)
            try await AnalysisService.purgeIdempotencyKeys(on: server.app.db, now: Date().addingTimeInterval(8 * 86_400))
            #expect(try await ProcessedAnalyzerEvent.query(on: server.app.db).count() == 0)
            try await server.postNetworkActivity(ua, categories: ["gambling"], url: "https://poker.example/again", idempotencyKey: "evt-1")
            #expect(try await server.messages(user).count == 2)
        }
    }

    @Test(arguments: TestDatabase.available)
    func messagesPageMarkAndDelete(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: three conflicts an hour apart
            let user = try await server.createUser()
            try await server.addNoGoGoal(user, category: Self.gambling)
            let (ua, _) = try await server.vpnLogin(user)
            for hoursAgo in [3.0, 2.0, 1.0] {
                try await server.postNetworkActivity(
                    ua, categories: ["gambling"], url: "https://h\(Int(hoursAgo)).example",
                    at: Date().addingTimeInterval(-hoursAgo * 3600))
            }
            // paging: newest first, with links
            let first = try await server.request(.GET, "\(user.path)/messages/?page=0&size=2", headers: user.passwordHeader)
            #expect(value(first.json, "page", "totalElements") as? Int == 3)
            #expect(value(first.json, "page", "totalPages") as? Int == 2)
            #expect(
                (value(first.json, "_embedded", "yona:messages") as? [[String: Any]])?.map { $0["url"] as? String } == [
                    "https://h1.example", "https://h2.example",
                ])
            #expect(value(first.json, "_links", "next") != nil)
            #expect(value(first.json, "_links", "prev") == nil)
            let second = try await server.request(.GET, "\(user.path)/messages/?page=1&size=2", headers: user.passwordHeader)
            #expect((value(second.json, "_embedded", "yona:messages") as? [[String: Any]])?.count == 1)
            #expect(value(second.json, "_links", "prev") != nil)
            let badPaging = try await server.request(.GET, "\(user.path)/messages/?page=-1", headers: user.passwordHeader)
            #expect(badPaging.errorCode == "error.request.invalid.parameter")
            // mark read, unread filter, unsupported action, delete
            let newest = try #require(try await server.messages(user).first?["messageId"] as? Int)
            let read = try await server.request(
                .POST, "\(user.path)/messages/\(newest)/markRead", headers: user.passwordHeader, json: ["properties": [:]])
            #expect(read.status == 200)
            #expect(value(read.json, "properties", "status") as? String == "done")
            #expect(value(read.json, "_embedded", "yona:affectedMessages", 0, "isRead") as? Bool == true)
            #expect(try await server.messages(user, query: "?onlyUnreadMessages=true").count == 2)
            let unsupported = try await server.request(
                .POST, "\(user.path)/messages/\(newest)/explode", headers: user.passwordHeader, json: ["properties": [:]])
            #expect(unsupported.errorCode == "error.message.action.not.supported")
            let deleted = try await server.request(.DELETE, "\(user.path)/messages/\(newest)", headers: user.passwordHeader)
            #expect(deleted.status == 200)
            #expect(try await server.messages(user).count == 2)
            let gone = try await server.request(.GET, "\(user.path)/messages/\(newest)", headers: user.passwordHeader)
            #expect(gone.status == 404)
            #expect(gone.errorCode == "error.message.not.found")
            // another user cannot read it
            let other = try await server.createUser()
            let remaining = try #require(try await server.messages(user).first?["messageId"] as? Int)
            let foreign = try await server.request(.GET, "/messages/\(remaining)?requestingUserId=\(other.id)", headers: other.passwordHeader)
            #expect(foreign.errorCode == "error.message.not.found")
            let unconfirmed = try await server.createUser(confirm: false)
            let early = try await server.request(.GET, "\(unconfirmed.path)/messages/", headers: unconfirmed.passwordHeader)
            #expect(early.errorCode == "error.mobile.number.not.confirmed")
        }
    }

    /// 50 events for one user from parallel clients (on PostgreSQL through two instances) give exactly
    /// the conflicts the rules say: 10 visits 30 minutes apart, each reported 5 times within 4 minutes.
    @Test(arguments: TestDatabase.available)
    func parallelEventsForOneUserGiveExactlyTheRuledMessages(db: TestDatabase) async throws {
        try await withServer(db) { first in
            let second = db == .postgres ? try await TestServer.start(.postgres, sharingDatabaseOf: first) : first
            let user = try await first.createUser(extra: [
                "deviceName": "Phone", "deviceOperatingSystem": "IOS", "deviceAppVersion": "1.0",
                "deviceAppVersionCode": 1, "deviceFirebaseInstanceId": "fiid-parallel",
            ])
            try await first.addNoGoGoal(user, category: Self.gambling, since: Date().addingTimeInterval(-86_400))
            let (ua, _) = try await first.vpnLogin(user)
            let t0 = Date().addingTimeInterval(-20 * 3600)
            let events = (0..<10).flatMap { visit in (0..<5).map { again in t0.addingTimeInterval(Double(visit) * 1800 + Double(again) * 60) } }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for (index, time) in events.shuffled().enumerated() {
                    let server = index % 2 == 0 ? first : second
                    group.addTask {
                        // 50 events queue behind one user's lock; on a loaded two-core machine the last waits long.
                        try await server.postNetworkActivity(
                            ua, categories: ["gambling"], url: "https://p.example/\(index)", at: time, timeout: .seconds(180)
                        ).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            if db == .postgres { await second.stop() }
            #expect(statuses.count == 50)
            #expect(statuses.allSatisfy { $0 == 204 })
            #expect(try await first.messages(user, query: "?size=100").count == 10)
            // ten messages, one push waiting for the phone: the newest (issue 34)
            #expect(try await PendingPush.query(on: first.app.db).count() == 1)
            #expect(try await Activity.query(on: first.app.db).count() == 10)
        }
    }

    /// The classifier's posts are recorded in shared rounds (group commit): an attacker's or a broken classifier's
    /// posts in the same round (unknown users, unknown devices, one event replayed in parallel) get their own
    /// answers and leave nothing behind, and the good posts around them all count.
    @Test(arguments: TestDatabase.available)
    func parallelPostsInOneRoundEachGetTheirOwnAnswer(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let replayed = try await server.createUser()
            try await server.addNoGoGoal(replayed, category: Self.gambling, since: Date().addingTimeInterval(-86_400))
            let (replayedUA, _) = try await server.vpnLogin(replayed)
            let busy = try await server.createUser()
            try await server.addNoGoGoal(busy, category: Self.gambling, since: Date().addingTimeInterval(-86_400))
            let (busyUA, _) = try await server.vpnLogin(busy)
            let t0 = Date().addingTimeInterval(-20 * 3600)
            enum Post: Sendable {
                case replay, unknownUser, unknownDevice
                case visit(Int)
            }
            let posts: [Post] = (0..<10).flatMap { [.replay, .unknownUser, .unknownDevice, .visit($0)] }.shuffled()
            let answers = try await withThrowingTaskGroup(of: (Post, APIResponse).self) { group in
                for post in posts {
                    group.addTask {
                        let answer: APIResponse
                        switch post {
                        case .replay:
                            answer = try await server.postNetworkActivity(
                                replayedUA, categories: ["gambling"], url: "https://p.example/once", at: t0, idempotencyKey: "evt-replayed",
                                timeout: .seconds(120))
                        case .unknownUser:
                            answer = try await server.postNetworkActivity(
                                UUID().uuidString, categories: ["gambling"], url: "https://p.example/", idempotencyKey: UUID().uuidString,
                                timeout: .seconds(120))
                        case .unknownDevice:
                            answer = try await server.postNetworkActivity(
                                busyUA, deviceIndex: 9, categories: ["gambling"], url: "https://p.example/", timeout: .seconds(120))
                        case .visit(let n):
                            // Visits 20 minutes apart: each one a new conflict.
                            answer = try await server.postNetworkActivity(
                                busyUA, categories: ["gambling"], url: "https://p.example/\(n)", at: t0.addingTimeInterval(Double(n) * 1200),
                                idempotencyKey: "visit-\(n)", timeout: .seconds(120))
                        }
                        return (post, answer)
                    }
                }
                return try await group.reduce(into: [(Post, APIResponse)]()) { $0.append($1) }
            }
            #expect(answers.count == 40)
            for (post, answer) in answers {
                switch post {
                case .replay, .visit: #expect(answer.status == 204)
                case .unknownUser: #expect(answer.status == 400 && answer.errorCode == "error.user.not.found.id")
                case .unknownDevice: #expect(answer.status == 404 && answer.errorCode == "error.device.not.found.id")
                }
            }
            #expect(try await server.messages(replayed, query: "?size=100").count == 1)
            let visits = try await server.messages(busy, query: "?size=100")
            #expect(visits.count == 10)
            #expect(Set(visits.compactMap { $0["url"] as? String }) == Set((0..<10).map { "https://p.example/\($0)" }))
            #expect(try await Activity.query(on: server.app.db).count() == 11)
            // Keys of refused posts are not remembered; the replayed key and the visits' are, once each.
            #expect(try await ProcessedAnalyzerEvent.query(on: server.app.db).count() == 11)
        }
    }

    /// One app-activity batch is one round: its events merge with each other and with what is stored exactly as
    /// separate posts would, though the round reads the store once per device and goal and writes at its end.
    @Test(arguments: TestDatabase.available)
    func aBatchMergesWithItselfAndWithWhatIsStored(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            try await server.addNoGoGoal(user, category: Self.gambling, since: Date().addingTimeInterval(-86_400))
            let (deviceID, _) = try await DevicesTests.firstDevice(server, user)
            let t0 = Date().addingTimeInterval(-3 * 3600).timeIntervalSince1970.rounded()
            func post(_ spans: [(Double, Double)]) async throws {
                let items = spans.map { span in
                    [
                        "application": "Poker App",
                        "startTime": YonaDateFormat.timestamp(Date(timeIntervalSince1970: t0 + span.0 * 60)),
                        "endTime": YonaDateFormat.timestamp(Date(timeIntervalSince1970: t0 + span.1 * 60)),
                    ]
                }
                let posted = try await server.request(
                    .POST, "\(user.path)/devices/\(deviceID)/appActivity/", headers: user.passwordHeader,
                    json: ["deviceDateTime": YonaDateFormat.timestamp(Date()), "activities": items])
                #expect(posted.status == 204, "\(posted.text)")
            }
            try await post([(60, 65)])
            // Minutes after t0: two that touch and merge, one that extends the stored activity, two that overlap and
            // make a new one, and a session after a pause of 8 minutes: a new activity (an app's session is extended
            // only where it overlaps or touches, as Yona's), but no new conflict (it lies within 15 minutes of one).
            // Sent out of order (the server sorts a batch by start).
            try await post([(101, 112), (2, 12), (64, 72), (0, 2), (100, 102), (20, 25)])
            let stored = try await Activity.query(on: server.app.db).sort(\.$startTime).all()
                .map { (($0.startTime.timeIntervalSince1970 - t0) / 60, ($0.endTime.timeIntervalSince1970 - t0) / 60) }
            let expected: [(Double, Double)] = [(0, 12), (20, 25), (60, 72), (100, 112)]
            #expect(stored.count == expected.count, "\(stored)")
            for (got, want) in zip(stored, expected) {
                #expect(abs(got.0 - want.0) < 0.02 && abs(got.1 - want.1) < 0.02, "\(stored)")
            }
            // A conflict for each new activity on the no-go goal: the first post's and the batch's two.
            #expect(try await server.messages(user, query: "?size=100").count == 3)
        }
    }

    /// A round reads ahead, in one statement per kind, what its events will ask the store (each one's candidate
    /// activity, and for a no-go goal whether another activity is near): it must decide exactly as the same events
    /// would one by one. Two users with the same goals and the same stored history get the same events, one user in a
    /// single round, the other in a round per event that asks the store as each event comes; their activities and
    /// conflicts must come out the same.
    @Test(arguments: TestDatabase.available)
    func aRoundDecidesAsItsEventsWouldOneByOne(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let t0 = Date().addingTimeInterval(-2 * 86_400).timeIntervalSince1970.rounded()
            func at(_ minutes: Double) -> Date { Date(timeIntervalSince1970: t0 + minutes * 60) }
            var users: [(TestUser, UUID, Int)] = []
            for _ in 0..<2 {
                let user = try await server.createUser()
                let budget = try await server.request(
                    .POST, "\(user.path)/goals/", headers: user.passwordHeader,
                    json: [
                        "@type": "BudgetGoal", "maxDurationMinutes": 60, "creationTime": YonaDateFormat.timestamp(at(-1440)),
                        "_links": ["yona:activityCategory": ["href": "\(server.baseURL)/activityCategories/\(Self.news)"]],
                    ])
                try #require(budget.status == 201, "\(budget.text)")
                let (ua, index) = try await server.vpnLogin(user)
                let anonymizedID = try #require(UUID(uuidString: ua))
                // The same stored history for both: network activity, and an app's session on the no-go goal, which
                // only the neighbour question finds (an app's activity is never a network event's merge candidate).
                for minutes in [0.0, 40, 100] {
                    for category in ["gambling", "news"] {
                        let posted = try await server.postNetworkActivity(
                            ua, deviceIndex: index, categories: [category], url: "https://h.example/", at: at(minutes))
                        try #require(posted.status == 204, "\(posted.text)")
                    }
                }
                let (deviceID, _) = try await DevicesTests.firstDevice(server, user)
                let session = try await server.request(
                    .POST, "\(user.path)/devices/\(deviceID)/appActivity/", headers: user.passwordHeader,
                    json: [
                        "deviceDateTime": YonaDateFormat.timestamp(Date()),
                        "activities": [
                            [
                                "application": "Poker App", "startTime": YonaDateFormat.timestamp(at(250)),
                                "endTime": YonaDateFormat.timestamp(at(255)),
                            ]
                        ],
                    ])
                try #require(session.status == 204, "\(session.text)")
                users.append((user, anonymizedID, index))
            }
            // Before, between, after and inside the stored activities, out of order, with repeats: merges with stored
            // ones and with the round's own, new activities with and without a neighbour (the app's session at 250–255
            // is the only neighbour of 265 and 245), one event in two categories.
            let plan: [(Double, [String])] = [
                (70, ["gambling"]), (5, ["gambling", "news"]), (30, ["news"]), (200, ["gambling"]), (-30, ["gambling"]),
                (205, ["gambling"]), (118, ["gambling", "news"]), (-20, ["news"]), (150, ["gambling"]), (56, ["gambling"]),
                (-31, ["gambling"]), (70, ["news"]), (400, ["news"]), (380, ["gambling"]), (-200, ["gambling", "news"]),
                (265, ["gambling"]), (245, ["gambling"]),
            ]
            func reports(of user: (TestUser, UUID, Int)) -> [ActivityReport] {
                plan.map { minutes, categories in
                    ActivityReport(
                        ActivityEvent(
                            userAnonymizedID: user.1, deviceIndex: user.2, categoryNames: categories, matchApplications: false,
                            url: "https://p.example/\(minutes)", startTime: at(minutes), endTime: nil, idempotencyKey: nil))
                }
            }
            let together = try await AnalysisService.recordRound(reports(of: users[0]), on: server.app.db)
            var apart: [Result<[Int64], any Error>] = []
            for report in reports(of: users[1]) {
                apart += try await AnalysisService.recordRound([report], on: server.app.db, readAhead: false)
            }
            let raisedTogether = try together.map { try $0.get().count }
            let raisedApart = try apart.map { try $0.get().count }
            #expect(raisedTogether == raisedApart)
            #expect(raisedApart.reduce(0, +) > 0 && raisedApart.contains(0), "\(raisedApart): some events raise a conflict, some do not")
            func activities(_ user: (TestUser, UUID, Int)) async throws -> [String] {
                let categories = Dictionary(
                    uniqueKeysWithValues: try await Goal.query(on: server.app.db).filter(\.$userAnonymized.$id == user.1).all().map {
                        (try $0.requireID(), $0.$activityCategory.id)
                    })
                return try await Activity.query(on: server.app.db).filter(\.$userAnonymized.$id == user.1).all().map {
                    let category = categories[$0.$goal.id] == UUID(uuidString: Self.gambling) ? "gambling" : "news"
                    return "\(category) \(($0.startTime.timeIntervalSince1970 - t0) / 60)–\(($0.endTime.timeIntervalSince1970 - t0) / 60)"
                }.sorted()
            }
            let stored = try await activities(users[0])
            #expect(stored == (try await activities(users[1])))
            #expect(stored.count > 7, "\(stored): the events add activities to the seven stored ones")
        }
    }

    /// A dump must not tell which app anyone used, nor that two users used the same one: the name is sealed to the
    /// user's inbox and the tag that keeps an app's sessions apart is keyed per user. Only the user reads the name.
    @Test(arguments: TestDatabase.available)
    func appNamesAreSealedAndTheirTagsJoinNobody(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let start = Date().addingTimeInterval(-2 * 3600)
            var tags: [String] = []
            for _ in 0..<2 {
                let user = try await server.createUser()
                // A report starts on the account's first day in Amsterdam: dated a day back, the sessions of two hours
                // ago are in it also when the test runs just after midnight there (it failed between 23:00 and 01:00 UTC).
                let created = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
                let edit = try #require(value(created.json, "_links", "edit", "href") as? String)
                let dated = try await server.request(
                    .PUT, edit, headers: user.passwordHeader,
                    json: [
                        "firstName": user.firstName, "lastName": "Ln\(user.firstName)", "nickname": user.nickname,
                        "mobileNumber": user.mobileNumber, "creationTime": YonaDateFormat.timestamp(start.addingTimeInterval(-86_400)),
                    ])
                try #require(dated.status == 200, "\(dated.text)")
                try await server.addNoGoGoal(user, category: Self.gambling, since: start.addingTimeInterval(-86_400))
                let (deviceID, _) = try await DevicesTests.firstDevice(server, user)
                let items = [("Poker App", 0.0), ("Lotto", 30.0), ("Poker App", 60.0)].map { app, minutes in
                    [
                        "application": app, "startTime": YonaDateFormat.timestamp(start.addingTimeInterval(minutes * 60)),
                        "endTime": YonaDateFormat.timestamp(start.addingTimeInterval(minutes * 60 + 300)),
                    ]
                }
                let posted = try await server.request(
                    .POST, "\(user.path)/devices/\(deviceID)/appActivity/", headers: user.passwordHeader,
                    json: ["deviceDateTime": YonaDateFormat.timestamp(Date()), "activities": items])
                try #require(posted.status == 204, "\(posted.text)")
                let anonymizedID = try #require(UUID(uuidString: try await server.vpnLogin(user).userAnonymizedID))
                let rows = try await server.app.db.sql.raw(
                    "SELECT start_time, app_tag, app_sealed FROM activities WHERE user_anonymized_id = \(bind: anonymizedID) ORDER BY start_time"
                ).all().map { (try $0.decode(column: "app_tag", as: String.self), try $0.decode(column: "app_sealed", as: Data?.self)) }
                let mine = rows
                try #require(mine.count == 3)
                #expect(mine[0].0 == mine[2].0 && mine[0].0 != mine[1].0, "one app, one tag; another app, another")
                for (_, sealed) in mine {
                    let sealed = try #require(sealed)
                    #expect(sealed.range(of: Data("Poker".utf8)) == nil && sealed.range(of: Data("Lotto".utf8)) == nil)
                }
                tags.append(mine[0].0)
                // The user reads the names back, in the order the sessions began.
                let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
                let goals = value(profile.json, "_embedded", "yona:goals", "_embedded", "yona:goals") as? [[String: Any]] ?? []
                let gambling = goals.first { (value($0, "_links", "yona:activityCategory", "href") as? String)?.hasSuffix(Self.gambling) == true }
                let goal = try #require(value(gambling as Any, "_links", "self", "href") as? String)
                let goalID = try #require(goal.split(separator: "?").first?.split(separator: "/").last)
                let raw = try await server.request(
                    .GET, "\(user.path)/activity/days/\(UserCalendar.day(start))/details/\(goalID)/raw/", headers: user.passwordHeader)
                try #require(raw.status == 200, "\(raw.text)")
                let apps = (value(raw.json, "_embedded", "yona:activities") as? [[String: Any]] ?? []).compactMap { $0["app"] as? String }
                if UserCalendar.day(start) == UserCalendar.day(start.addingTimeInterval(3900)) {
                    #expect(apps == ["Poker App", "Lotto", "Poker App"])
                }
            }
            #expect(tags[0] != tags[1], "the same app's tag differs between users")
        }
    }
}
