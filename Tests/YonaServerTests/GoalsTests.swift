import Foundation
import NIOHTTP1
import Testing

@testable import YonaAPI
@testable import YonaServer
@testable import YonaStore

/// api.md "Activity categories and goals".
@Suite struct GoalsTests {
    static let gambling = "192d69f4-8d3e-499b-983c-36ca97340ba9"
    static let news = "743738fd-052f-4532-a2a3-ba60dcb1adbf"
    static let social = "27395d17-7022-4f71-9daf-f431ff4f11e8"
    static let adult = "1f088f0b-9952-4ac7-bdc0-fd242238bc1d"

    static func categoryLink(_ server: TestServer, _ id: String) -> [String: Any] {
        ["yona:activityCategory": ["href": "\(server.baseURL)/activityCategories/\(id)"]]
    }

    static func noGo(_ server: TestServer, _ category: String) -> [String: Any] {
        ["@type": "BudgetGoal", "maxDurationMinutes": 0, "_links": categoryLink(server, category)]
    }

    @Test(arguments: TestDatabase.available)
    func defaultCategoriesAreLocalizedAndPublic(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let english = try await server.request(.GET, "/activityCategories/")
            #expect(english.status == 200)
            let items = try #require(value(english.json, "_embedded", "yona:activityCategories") as? [[String: Any]])
            let names = Set(items.compactMap { $0["name"] as? String })
            #expect(names.isSuperset(of: ["Gambling", "News", "Social", "Communication", "Multimedia", "Adult content"]))
            let dutch = try await server.request(.GET, "/activityCategories/\(Self.gambling)", headers: [("Accept-Language", "nl-NL")])
            #expect(dutch.json["name"] as? String == "Gokken")
            #expect((value(dutch.json, "_links", "self", "href") as? String)?.hasSuffix(Self.gambling) == true)
            let unknown = try await server.request(.GET, "/activityCategories/\(UUID())")
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "error.activitycategory.not.found")
        }
    }

    @Test(arguments: TestDatabase.available)
    func newUsersGetTheMandatoryNoGoGoalWhichCannotBeRemoved(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            let goals = try await server.request(.GET, "\(user.path)/goals/", headers: user.passwordHeader)
            let items = try #require(value(goals.json, "_embedded", "yona:goals") as? [[String: Any]])
            #expect(items.count == 1)
            let mandatory = try #require(items.first)
            #expect(mandatory["@type"] as? String == "BudgetGoal")
            #expect(mandatory["maxDurationMinutes"] as? Int == 0)
            #expect((value(mandatory, "_links", "yona:activityCategory", "href") as? String)?.hasSuffix(Self.gambling) == true)
            #expect(mandatory["creationTime"] as? String == "2017-01-01T12:00:00.000+0000", "dated as Yona dates it")
            #expect(value(mandatory, "_links", "edit") == nil)
            let href = try #require(value(mandatory, "_links", "self", "href") as? String)
            let removed = try await server.request(.DELETE, href, headers: user.passwordHeader)
            #expect(removed.errorCode == "error.goal.cannot.remove.mandatory")
            let relaxed = try await server.request(
                .PUT, href, headers: user.passwordHeader,
                json: [
                    "@type": "BudgetGoal", "maxDurationMinutes": 60, "_links": Self.categoryLink(server, Self.gambling),
                ])
            #expect(relaxed.errorCode == "error.goal.cannot.remove.mandatory")
            let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
            #expect((value(profile.json, "_embedded", "yona:goals", "_embedded", "yona:goals") as? [Any])?.count == 1)
        }
    }

    @Test(arguments: TestDatabase.available)
    func addChangeAndRemoveGoals(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let user = try await server.createUser()
            // act: a no-go goal on social media and a time-zone goal on news
            let noGo = try await server.request(.POST, "\(user.path)/goals/", headers: user.passwordHeader, json: Self.noGo(server, Self.social))
            let zones = try await server.request(
                .POST, "\(user.path)/goals/", headers: user.passwordHeader,
                json: [
                    "@type": "TimeZoneGoal", "zones": ["08:00-12:00", "20:00-24:00"], "_links": Self.categoryLink(server, Self.news),
                ])
            // check
            #expect(noGo.status == 201, "\(noGo.text)")
            #expect(noGo.json["maxDurationMinutes"] as? Int == 0)
            #expect(value(noGo.json, "_links", "curies") != nil)
            #expect(zones.status == 201, "\(zones.text)")
            #expect(zones.json["zones"] as? [String] == ["08:00-12:00", "20:00-24:00"])
            #expect(zones.json["maxDurationMinutes"] == nil)
            // change the budget, then remove it
            let href = try #require(value(noGo.json, "_links", "self", "href") as? String)
            let changed = try await server.request(
                .PUT, href, headers: user.passwordHeader,
                json: [
                    "@type": "BudgetGoal", "maxDurationMinutes": 30, "_links": Self.categoryLink(server, Self.social),
                ])
            #expect(changed.json["maxDurationMinutes"] as? Int == 30)
            #expect(try await server.request(.DELETE, href, headers: user.passwordHeader).status == 204)
            let all = try await server.request(.GET, "\(user.path)/goals/", headers: user.passwordHeader)
            #expect((value(all.json, "_embedded", "yona:goals") as? [Any])?.count == 2)
            #expect(try await server.request(.GET, href, headers: user.passwordHeader).errorCode == "error.goal.not.found.id.for.user.anonymized")
        }
    }

    @Test(arguments: TestDatabase.available)
    func goalErrors(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            let cases: [(String, [String: Any], Int, String)] = [
                ("second goal", Self.noGo(server, Self.gambling), 400, "error.goal.cannot.add.second.on.activity.category"),
                ("unknown category", Self.noGo(server, UUID().uuidString), 404, "error.activitycategory.not.found"),
                ("no category", ["@type": "BudgetGoal", "maxDurationMinutes": 0], 400, "error.request.missing.property"),
                (
                    "negative budget", ["@type": "BudgetGoal", "maxDurationMinutes": -1, "_links": Self.categoryLink(server, Self.news)], 400,
                    "error.goal.budget.invalid.max.duration.cannot.be.negative"
                ),
                (
                    "bad zone", ["@type": "TimeZoneGoal", "zones": ["12:00-08:00"], "_links": Self.categoryLink(server, Self.news)], 400,
                    "error.goal.time.zone.to.not.beyond.from"
                ),
                ("unknown type", ["@type": "MagicGoal", "_links": Self.categoryLink(server, Self.news)], 400, "error.goal.invalid"),
                ("extra property", Self.noGo(server, Self.news).merging(["colour": "red"]) { $1 }, 400, "error.request.extra.property"),
            ]
            for (name, body, status, code) in cases {
                let response = try await server.request(.POST, "\(user.path)/goals/", headers: user.passwordHeader, json: body)
                #expect(response.status == status, "\(name)")
                #expect(response.errorCode == code, "\(name): \(response.text)")
            }
        }
    }

    @Test func onlyATestServerAcceptsAGoalInThePast() async throws {
        for testServer in [true, false] {
            try await withServer(.sqlite, adjust: { $0.testServer = testServer }) { server in
                let user = try await server.createUser(confirm: testServer)
                guard testServer else {
                    // Without a test server the code is random, so only the refusal of the field is checked.
                    let refused = try await server.request(
                        .POST, "\(user.path)/goals/", headers: user.passwordHeader,
                        json: Self.noGo(server, Self.news).merging(["creationTime": "2026-01-01T10:00:00.000+0000"]) { $1 })
                    #expect(refused.errorCode == "error.request.extra.property")
                    return
                }
                let past = try await server.request(
                    .POST, "\(user.path)/goals/", headers: user.passwordHeader,
                    json: Self.noGo(server, Self.news).merging(["creationTime": "2026-01-01T10:00:00.000+0000"]) { $1 })
                #expect(past.json["creationTime"] as? String == "2026-01-01T10:00:00.000+0000")
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func adminEditsCategoriesBehindTheInternalToken(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let body: [String: Any] = [
                "localizableName": ["en-US": "Gaming", "nl-NL": "Gamen"], "localizableDescription": ["en-US": "Games"],
                "smoothwallCategories": ["Games"], "applications": ["Fortnite"], "mandatoryNoGo": false,
            ]
            let missing = try await server.request(.POST, "/admin/activityCategories/", json: body)
            #expect(missing.status == 401)
            #expect(missing.errorCode == "error.unauthorized")
            let wrong = try await server.request(.POST, "/admin/activityCategories/", headers: [("Authorization", "Bearer nope")], json: body)
            #expect(wrong.status == 401)
            let created = try await server.request(.POST, "/admin/activityCategories/", headers: TestServer.bearer, json: body)
            #expect(created.status == 200, "Yona's admin service answers 200: \(created.text)")
            let id = try #require(created.json["id"] as? String)
            // admin ActivityCategoriesTest: Try add duplicate English name; Try update to duplicate Dutch name
            let duplicate = try await server.request(
                .POST, "/admin/activityCategories/", headers: TestServer.bearer,
                json: body.merging(["localizableName": ["en-US": "Gambling", "nl-NL": "Gokjes"]]) { $1 })
            #expect(duplicate.errorCode == "error.activitycategory.duplicate.name")
            let duplicateDutch = try await server.request(
                .PUT, "/admin/activityCategories/\(id)", headers: TestServer.bearer,
                json: body.merging(["localizableName": ["en-US": "Gaming", "nl-NL": "Gokken"]]) { $1 })
            #expect(duplicateDutch.errorCode == "error.activitycategory.duplicate.name")
            let publicView = try await server.request(.GET, "/activityCategories/\(id)", headers: [("Accept-Language", "nl-NL")])
            #expect(publicView.json["name"] as? String == "Gamen")
            let renamed = try await server.request(
                .PUT, "/admin/activityCategories/\(id)", headers: TestServer.bearer,
                json: body.merging(["localizableName": ["en-US": "Games"]]) { $1 })
            #expect(renamed.json["localizableName"] as? [String: String] == ["en-US": "Games"])
            #expect(try await server.request(.DELETE, "/admin/activityCategories/\(id)", headers: TestServer.bearer).status == 204)
            #expect(try await server.request(.GET, "/activityCategories/\(id)").status == 404)
        }
    }
}
