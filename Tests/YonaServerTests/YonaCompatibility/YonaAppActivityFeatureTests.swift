import Foundation
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer

/// Yona's `AppActivityTest.groovy`: what the phone reports about its own app use, as the reports and the goal
/// conflicts then show it.
@Suite struct YonaAppActivityFeatureTests {
    typealias A = YonaActivityFeatureTests

    /// Richard on an iPhone since W-1 Mon 02:18 (his gambling goal is Yona's mandatory one, older still).
    static func richard(_ server: TestServer) async throws -> YonaApp {
        let richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: A.iPhone)
        return try await A.date(server, richard, to: A.at(1, 1, 2, 18))
    }

    static func post(_ server: TestServer, _ app: YonaApp, _ body: [String: Any]) async throws -> APIResponse {
        let href = try #require(value(app.requestingDevice, "_links", "yona:appActivity", "href") as? String)
        return try await server.request(.POST, href, headers: app.headers, json: body)
    }

    static func item(_ name: String, _ start: Date, _ end: Date) -> [String: Any] {
        ["application": name, "startTime": YonaDateFormat.timestamp(start), "endTime": YonaDateFormat.timestamp(end)]
    }

    static func gamblingDetail(_ server: TestServer, _ app: YonaApp, on day: Date) async throws -> [String: Any] {
        let gambling = try #require(
            YonaAssertions.stripped(app.goals.first.flatMap { value($0, "_links", "self", "href") as? String })?.split(separator: "/").last)
        return try await A.get(server, "\(app.link("yona:dailyActivityReports")!)\(UserCalendar.day(day))/details/\(gambling)", app)
    }

    static func conflicts(_ server: TestServer, _ app: YonaApp) async throws -> [[String: Any]] {
        let page = try await A.get(server, app.link("yona:messages"), app)
        return (value(page, "_embedded", "yona:messages") as? [[String: Any]] ?? []).filter { $0["@type"] as? String == "GoalConflictMessage" }
    }

    @Test(arguments: TestDatabase.available)
    func appActivityTestSendMultipleAppActivitiesAfterOfflinePeriod(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await Self.richard(server)
            let eleven = A.at(1, 1, 11, 0)
            let posted = try await Self.post(
                server, richard,
                [
                    "deviceDateTime": YonaDateFormat.timestamp(Date()),
                    "activities": [
                        Self.item("Lotto App", eleven.addingTimeInterval(3590), eleven.addingTimeInterval(3600)),
                        Self.item("Poker App", eleven, eleven.addingTimeInterval(3590)),
                    ],
                ])
            #expect(posted.status == 204, "\(posted.text)")
            let conflicts = try await Self.conflicts(server, richard)
            #expect(conflicts.count == 1, "one conflict for the continuous hour, whatever the order of the batch")
            #expect(conflicts.first?["activityEndTime"] as? String == YonaDateFormat.timestamp(eleven.addingTimeInterval(3590)))
            #expect(try await Self.gamblingDetail(server, richard, on: eleven)["totalActivityDurationMinutes"] as? Int == 60)
        }
    }

    @Test(arguments: TestDatabase.available)
    func appActivityTestOverlappingNetworkAndAppActivityAndDuplicatesAreCountedOnce(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await Self.richard(server)
            let g = A.at(1, 1, 2, 18)
            // 'Overlapping network and app activity is counted only once'
            try await A.networkActivity(server, richard, "gambling", at: g.addingTimeInterval(70 * 60))
            let app = try await Self.post(
                server, richard,
                [
                    "deviceDateTime": YonaDateFormat.timestamp(Date()),
                    "activities": [Self.item("Poker App", g.addingTimeInterval(3600), g.addingTimeInterval(80 * 60))],
                ])
            #expect(app.status == 204)
            #expect(try await Self.gamblingDetail(server, richard, on: g)["totalActivityDurationMinutes"] as? Int == 20)
            // 'Duplicate app activity reported out of sequence is counted only once', a day later
            let h = UserCalendar.adding(days: 1, to: g)
            try await A.networkActivity(server, richard, "gambling", at: h.addingTimeInterval(2 * 3600))
            let one = Self.item("Poker App", h.addingTimeInterval(3600), h.addingTimeInterval(80 * 60))
            let two = Self.item("Poker App", h.addingTimeInterval(65 * 60), h.addingTimeInterval(85 * 60))
            let batch = try await Self.post(server, richard, ["deviceDateTime": YonaDateFormat.timestamp(Date()), "activities": [one, two, one]])
            #expect(batch.status == 204)
            #expect(try await Self.gamblingDetail(server, richard, on: h)["totalActivityDurationMinutes"] as? Int == 26)
        }
    }

    @Test(arguments: TestDatabase.available)
    func appActivityTestClockMarginsIncompleteRequestsAndOversizedBatches(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: A.iPhone)
            let goal = try await A.addGoal(
                server, richard,
                [
                    "@type": "BudgetGoal", "maxDurationMinutes": 0,
                    "_links": ["yona:activityCategory": ["href": "\(server.baseURL)/activityCategories/\(GoalsTests.news)"]],
                ],
                at: Date().addingTimeInterval(-3600))
            _ = goal
            let created = Date().addingTimeInterval(-3600)
            // 'Send app activity within device time inaccuracy window': 5 s before the goal, 5 s into the future
            let margin = try await Self.post(
                server, richard,
                [
                    "deviceDateTime": YonaDateFormat.timestamp(Date()),
                    "activities": [Self.item("NU.nl", created.addingTimeInterval(-5), Date().addingTimeInterval(5))],
                ])
            #expect(margin.status == 204, "\(margin.text)")
            #expect(try await Self.conflicts(server, richard).count >= 1)

            // 'Try post incomplete app activity request': Yona's texts name the missing property
            let noActivities = try await Self.post(server, richard, ["deviceDateTime": YonaDateFormat.timestamp(Date())])
            #expect(noActivities.status == 400 && noActivities.text.contains("Missing required creator property 'activities'"))
            let noTime = try await Self.post(server, richard, ["activities": [] as [Any]])
            #expect(noTime.status == 400 && noTime.text.contains("Missing required creator property 'deviceDateTime'"))

            // a batch with one bad item records nothing of it; one beyond 200 items is dropped with 200, as Yona's
            let before = try await Self.conflicts(server, richard).count
            let later = Date().addingTimeInterval(-600)
            let refused = try await Self.post(
                server, richard,
                [
                    "deviceDateTime": YonaDateFormat.timestamp(Date()),
                    "activities": [
                        Self.item("Poker App", later, later.addingTimeInterval(60)), Self.item("Poker App", later, later.addingTimeInterval(-60)),
                    ],
                ])
            #expect(refused.status == 400 && refused.errorCode == "error.analysis.invalid.app.activity.data.end.before.start")
            let oversized = try await Self.post(
                server, richard,
                [
                    "deviceDateTime": YonaDateFormat.timestamp(Date()),
                    "activities": Array(repeating: Self.item("Poker App", later, later.addingTimeInterval(60)), count: 201),
                ])
            #expect(oversized.status == 200)
            #expect(try await Self.conflicts(server, richard).count == before, "neither batch raised anything")
            // A batch within the limit is processed (two items: 200 serialized records can outlast a busy machine's
            // request deadline, and the server then records on after the test has stopped it).
            let withinLimit = try await Self.post(
                server, richard,
                [
                    "deviceDateTime": YonaDateFormat.timestamp(Date()),
                    "activities": Array(repeating: Self.item("Poker App", later, later.addingTimeInterval(60)), count: 2),
                ])
            #expect(withinLimit.status == 204)
            #expect(try await Self.conflicts(server, richard).count == before + 1)
        }
    }
}

/// Yona's `RelevantSmoothwallCategoriesTest.groovy` (analysis service).
@Suite struct YonaRelevantCategoriesFeatureTests {
    @Test func relevantSmoothwallCategoriesTestGetRelevantSmoothwallCategories() async throws {
        try await withServer(.sqlite) { server in
            let response = try await server.request(.GET, "/relevantSmoothwallCategories/", headers: TestServer.bearer)
            #expect(response.status == 200)
            let categories = try #require(response.json["categories"] as? [String])
            #expect(categories.count > 10)
            for expected in ["Gambling", "lotto", "news/media", "newsgroups/forums", "social"] {
                #expect(categories.contains(expected), "\(expected)")
            }
            #expect(Set(categories).count == categories.count, "each once")
            #expect(try await server.request(.GET, "/relevantSmoothwallCategories/").status == 401, "the analyzer API's token")
        }
    }
}
