import Foundation
import Testing

@testable import YonaAPI
@testable import YonaServer

/// Yona's `EditGoalsTest` features, walked with the links the app holds, on SQLite and PostgreSQL. Yona's test
/// client sends budgets as JSON strings (`"maxDurationMinutes":"60"`); so do these tests.
@Suite struct YonaGoalFeatureTests {
    static func budget(_ server: TestServer, _ category: String, _ minutes: String, creationTime: Date? = nil) -> [String: Any] {
        var body: [String: Any] = ["@type": "BudgetGoal", "maxDurationMinutes": minutes, "_links": GoalsTests.categoryLink(server, category)]
        if let creationTime { body["creationTime"] = YonaDateFormat.timestamp(creationTime) }
        return body
    }

    static func timeZone(_ server: TestServer, _ category: String, _ zones: [String]) -> [String: Any] {
        ["@type": "TimeZoneGoal", "zones": zones, "_links": GoalsTests.categoryLink(server, category)]
    }

    static func goals(_ server: TestServer, _ user: TestUser) async throws -> [[String: Any]] {
        let list = try await server.request(.GET, "\(user.path)/goals/", headers: user.passwordHeader)
        try #require(list.status == 200, "\(list.text)")
        return value(list.json, "_embedded", "yona:goals") as? [[String: Any]] ?? []
    }

    static func onCategory(_ goals: [[String: Any]], _ category: String) -> [[String: Any]] {
        goals.filter { (value($0, "_links", "yona:activityCategory", "href") as? String)?.hasSuffix(category) == true }
    }

    @Test("EditGoalsTest: Get goals", arguments: TestDatabase.available)
    func getGoals(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser()
            let added = try await server.request(
                .POST, "\(richard.path)/goals/", headers: richard.passwordHeader,
                json: Self.budget(server, GoalsTests.news, "0"))
            #expect(added.status == 201, "\(added.text)")
            let goals = try await Self.goals(server, richard)
            #expect(goals.count == 2)
            let gambling = try #require(Self.onCategory(goals, GoalsTests.gambling).first)
            #expect(gambling["@type"] as? String == "BudgetGoal")
            #expect(value(gambling, "_links", "edit") == nil, "the mandatory goal cannot be edited")
            #expect(gambling["creationTime"] as? String == "2017-01-01T12:00:00.000+0000")
            let news = try #require(Self.onCategory(goals, GoalsTests.news).first)
            #expect(value(news, "_links", "edit", "href") is String)
            #expect(news["spreadCells"] == nil, "budget goals have no spread cells")
        }
    }

    @Test(
        "EditGoalsTest: Add time zone goal; Add full-day, first hour, last hour and max zones time zone goal",
        arguments: TestDatabase.available)
    func spreadCells(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser()
            let everyQuarter: [String] = (0..<96).map { (q: Int) -> String in
                let (start, end) = (q * 15, q * 15 + 15)
                return String(format: "%02d:%02d-%02d:%02d", start / 60, start % 60, end / 60, end % 60)
            }
            let cases: [([String], [Int])] = [
                (["11:00-12:00"], [44, 45, 46, 47]), (["00:00-24:00"], Array(0...95)), (["00:00-01:00"], [0, 1, 2, 3]),
                (["23:00-24:00"], Array(92...95)), (everyQuarter, Array(0...95)),
            ]
            for (zones, cells) in cases {
                let added = try await server.request(
                    .POST, "\(richard.path)/goals/", headers: richard.passwordHeader,
                    json: Self.timeZone(server, GoalsTests.social, zones))
                #expect(added.status == 201, "\(zones.prefix(2)): \(added.text)")
                #expect((added.json["zones"] as? [String])?.count == zones.count)
                #expect(added.json["spreadCells"] as? [Int] == cells, "\(zones.prefix(2))")
                #expect(added.json["maxDurationMinutes"] == nil)
                let listed = try #require(Self.onCategory(try await Self.goals(server, richard), GoalsTests.social).first)
                #expect(listed["spreadCells"] as? [Int] == cells)
                #expect(listed["historyItem"] as? Bool == false)
                let removed = try await server.request(
                    .DELETE, try #require(value(added.json, "_links", "edit", "href") as? String),
                    headers: richard.passwordHeader)
                #expect(removed.status == 204)
            }
        }
    }

    @Test("EditGoalsTest: Update budget goal; Update time zone goal", arguments: TestDatabase.available)
    func updateKeepsHistory(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser()
            let weekAgo = Date().addingTimeInterval(-7 * 86_400)
            let budget = try await server.request(
                .POST, "\(richard.path)/goals/", headers: richard.passwordHeader,
                json: Self.budget(server, GoalsTests.social, "60", creationTime: weekAgo))
            let zones = try await server.request(
                .POST, "\(richard.path)/goals/", headers: richard.passwordHeader,
                json: Self.timeZone(server, GoalsTests.news, ["10:00-11:00"]))
            // act
            let budgetEdit = try #require(value(budget.json, "_links", "edit", "href") as? String)
            let sent = Date()
            let updated = try await server.request(
                .PUT, budgetEdit, headers: richard.passwordHeader, json: Self.budget(server, GoalsTests.social, "120"))
            let answered = Date()
            let zonesEdit = try #require(value(zones.json, "_links", "edit", "href") as? String)
            let zonesUpdated = try await server.request(
                .PUT, zonesEdit, headers: richard.passwordHeader,
                json: Self.timeZone(server, GoalsTests.news, ["11:00-12:00", "20:00-22:00"]))
            // check: the goal in force changed and is dated now; the old version stays as a history item
            #expect(updated.status == 200, "\(updated.text)")
            #expect(updated.json["maxDurationMinutes"] as? Int == 120)
            let changedAt = try #require((updated.json["creationTime"] as? String).flatMap(YonaDateFormat.parseTimestamp))
            // dated when the server made the change: between sending and the answer (not "within 10 s of now", which
            // a loaded machine running the whole suite once missed)
            #expect(changedAt >= sent.addingTimeInterval(-1) && changedAt <= answered.addingTimeInterval(1), "\(changedAt) \(sent) \(answered)")
            #expect(zonesUpdated.json["spreadCells"] as? [Int] == [44, 45, 46, 47] + Array(80...87))
            let goals = try await Self.goals(server, richard)
            #expect(goals.count == 5, "Gambling, the two goals in force and their two history items")
            let social = Self.onCategory(goals, GoalsTests.social)
            #expect(social.count == 2)
            #expect(social.first { $0["historyItem"] as? Bool == true }?["maxDurationMinutes"] as? Int == 60)
            #expect(social.first { $0["historyItem"] as? Bool == false }?["maxDurationMinutes"] as? Int == 120)
            let news = Self.onCategory(goals, GoalsTests.news)
            #expect(news.first { $0["historyItem"] as? Bool == true }?["spreadCells"] as? [Int] == [40, 41, 42, 43])
            // the profile embeds the same list
            let profile = try await server.request(.GET, richard.profilePath, headers: richard.passwordHeader)
            #expect((value(profile.json, "_embedded", "yona:goals", "_embedded", "yona:goals") as? [Any])?.count == 5)
        }
    }

    @Test("A buddy's earlier goal version answers at the self link the buddy's goal list gives it", arguments: TestDatabase.available)
    func buddysHistoryItemIsFollowable(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let bob = try await server.createUser(nickname: "BD")
            let budget = try await server.request(
                .POST, "\(bob.path)/goals/", headers: bob.passwordHeader, json: Self.budget(server, GoalsTests.social, "60"))
            let edit = try #require(value(budget.json, "_links", "edit", "href") as? String)
            #expect(
                try await server.request(.PUT, edit, headers: bob.passwordHeader, json: Self.budget(server, GoalsTests.social, "120")).status == 200)
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            let profile = try await server.request(.GET, richard.profilePath, headers: richard.passwordHeader)
            let bobsGoalsHref = try #require(
                value(
                    profile.json, "_embedded", "yona:buddies", "_embedded", "yona:buddies", 0, "_embedded", "yona:user", "_embedded", "yona:goals",
                    "_links", "self", "href") as? String, "\(profile.text)")
            let bobsGoals = try await server.request(.GET, bobsGoalsHref, headers: richard.passwordHeader)
            let social = Self.onCategory(value(bobsGoals.json, "_embedded", "yona:goals") as? [[String: Any]] ?? [], GoalsTests.social)
            let earlier = try #require(social.first { $0["historyItem"] as? Bool == true }, "\(bobsGoals.text)")
            let current = try #require(social.first { $0["historyItem"] as? Bool == false })
            // act
            let followedEarlier = try await server.request(
                .GET, try #require(value(earlier, "_links", "self", "href") as? String), headers: richard.passwordHeader)
            let followedCurrent = try await server.request(
                .GET, try #require(value(current, "_links", "self", "href") as? String), headers: richard.passwordHeader)
            // check: both versions answer as listed; Bob's own link to his earlier version is not a goal of his (as Yona)
            #expect(followedEarlier.status == 200, "\(followedEarlier.text)")
            #expect(followedEarlier.json["historyItem"] as? Bool == true)
            #expect(followedEarlier.json["maxDurationMinutes"] as? Int == 60)
            #expect(value(followedEarlier.json, "_links", "self", "href") as? String == value(earlier, "_links", "self", "href") as? String)
            #expect(value(followedEarlier.json, "_links", "edit") == nil)
            #expect(followedCurrent.status == 200 && followedCurrent.json["maxDurationMinutes"] as? Int == 120)
            let own = Self.onCategory(try await Self.goals(server, bob), GoalsTests.social)
            let ownEarlier = try #require(own.first { $0["historyItem"] as? Bool == true })
            let ownFollowed = try await server.request(
                .GET, try #require(value(ownEarlier, "_links", "self", "href") as? String), headers: bob.passwordHeader)
            #expect(
                ownFollowed.status == 400 && ownFollowed.json["code"] as? String == "error.goal.not.found.id.for.user.anonymized",
                "\(ownFollowed.text)")
        }
    }

    @Test("EditGoalsTest: Update goal multiple times; Try setting update time before creation time", arguments: TestDatabase.available)
    func updateMultipleTimes(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser()
            let twoWeeksAgo = Date().addingTimeInterval(-14 * 86_400)
            let added = try await server.request(
                .POST, "\(richard.path)/goals/", headers: richard.passwordHeader,
                json: Self.budget(server, GoalsTests.social, "60", creationTime: twoWeeksAgo))
            let edit = try #require(value(added.json, "_links", "edit", "href") as? String)
            let tooEarly = try await server.request(
                .PUT, edit, headers: richard.passwordHeader,
                json: Self.budget(server, GoalsTests.social, "10", creationTime: twoWeeksAgo.addingTimeInterval(-60)))
            #expect(tooEarly.status == 400)
            #expect(tooEarly.errorCode == "error.goal.update.time.before.original")
            let t1 = Date().addingTimeInterval(-7 * 86_400)
            for (index, (minutes, time)) in [("120", t1), ("180", t1.addingTimeInterval(15 * 60)), ("240", t1.addingTimeInterval(35 * 60))]
                .enumerated()
            {
                let updated = try await server.request(
                    .PUT, edit, headers: richard.passwordHeader,
                    json: Self.budget(server, GoalsTests.social, minutes, creationTime: time))
                #expect(updated.status == 200, "\(updated.text)")
                #expect(updated.json["creationTime"] as? String == YonaDateFormat.timestamp(time))
                let goals = try await Self.goals(server, richard)
                #expect(goals.count == 3 + index)
                #expect(Self.onCategory(goals, GoalsTests.social).count == 2 + index)
            }
        }
    }

    @Test("EditGoalsTest: Try update type of goal; Try invalid budget goal; Try invalid time zone goal", arguments: TestDatabase.available)
    func invalidGoals(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser()
            let added = try await server.request(
                .POST, "\(richard.path)/goals/", headers: richard.passwordHeader,
                json: Self.budget(server, GoalsTests.social, "60"))
            let edit = try #require(value(added.json, "_links", "edit", "href") as? String)
            let typeChange = try await server.request(
                .PUT, edit, headers: richard.passwordHeader,
                json: Self.timeZone(server, GoalsTests.social, ["11:00-12:00"]))
            #expect(typeChange.errorCode == "error.goal.cannot.change.type")
            let negative = try await server.request(
                .POST, "\(richard.path)/goals/", headers: richard.passwordHeader,
                json: Self.budget(server, GoalsTests.news, "-1"))
            #expect(negative.errorCode == "error.goal.budget.invalid.max.duration.cannot.be.negative")
            let zoneCases: [([String], String)] = [
                ([], "error.goal.time.zone.invalid.at.least.one.zone.required"),
                (["31:00-12:00"], "error.goal.time.zone.invalid.zone.format"),
                (["12:00-12:00"], "error.goal.time.zone.to.not.beyond.from"),
                (["25:00-12:00"], "error.goal.time.zone.not.a.valid.hour"),
                (["11:00-25:00"], "error.goal.time.zone.not.a.valid.hour"),
                (["11:01-12:00"], "error.goal.time.zone.not.a.quarter.hour"),
                (["11:00-12:16"], "error.goal.time.zone.not.a.quarter.hour"),
                (["24:15-24:30"], "error.goal.time.zone.beyond.twenty.four"),
                (["24:00-24:15"], "error.goal.time.zone.beyond.twenty.four"),
            ]
            for (zones, code) in zoneCases {
                let response = try await server.request(
                    .POST, "\(richard.path)/goals/", headers: richard.passwordHeader,
                    json: Self.timeZone(server, GoalsTests.news, zones))
                #expect(response.status == 400, "\(zones)")
                #expect(response.errorCode == code, "\(zones): \(response.text)")
            }
            let fullDay = try await server.request(
                .POST, "\(richard.path)/goals/", headers: richard.passwordHeader,
                json: Self.timeZone(server, GoalsTests.news, ["00:00-24:00"]))
            #expect(fullDay.status == 201)
        }
    }

    @Test("EditGoalsTest: Validation: Try to remove mandatory goal", arguments: TestDatabase.available)
    func removeMandatoryGoal(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser()
            let gambling = try #require(Self.onCategory(try await Self.goals(server, richard), GoalsTests.gambling).first)
            let removed = try await server.request(
                .DELETE, try #require(value(gambling, "_links", "self", "href") as? String),
                headers: richard.passwordHeader)
            #expect(removed.status == 400)
            #expect(try await Self.goals(server, richard).count == 1)
        }
    }

    @Test("EditGoalsTest: a visit that happened before a goal changed counts for the version then in force", arguments: TestDatabase.available)
    func lateEventUsesTheVersionInForce(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            let added = try await server.request(
                .POST, "\(user.path)/goals/", headers: user.passwordHeader,
                json: Self.budget(server, GoalsTests.news, "0", creationTime: Date().addingTimeInterval(-3 * 3600)))
            // the no-go goal is relaxed to an hour a day an hour ago
            let relaxed = try await server.request(
                .PUT, try #require(value(added.json, "_links", "edit", "href") as? String),
                headers: user.passwordHeader,
                json: Self.budget(server, GoalsTests.news, "60", creationTime: Date().addingTimeInterval(-3600)))
            #expect(relaxed.status == 200, "\(relaxed.text)")
            let (ua, _) = try await server.vpnLogin(user)
            // a visit from two hours ago arrives late: the no-go version was in force, so it is a conflict
            try await server.postNetworkActivity(ua, categories: ["news/media"], url: "https://late.example", at: Date().addingTimeInterval(-7200))
            // a visit now: only a budget, no conflict
            try await server.postNetworkActivity(ua, categories: ["news/media"], url: "https://now.example", at: Date().addingTimeInterval(-60))
            let conflicts = try await server.messages(user).filter { $0["@type"] as? String == "GoalConflictMessage" }
            #expect(conflicts.map { $0["url"] as? String } == ["https://late.example"])
        }
    }
}
