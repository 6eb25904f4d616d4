import Foundation
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer

/// Yona's "last seen": `lastMonitoredActivityDate` in `UserTest.groovy` and `BasicBuddyTest.groovy`.
@Suite struct YonaLastSeenFeatureTests {
    typealias A = YonaActivityFeatureTests

    @Test(arguments: TestDatabase.available)
    func userTestLastMonitoredActivityDateAfterNoneOneAndMultipleActivities(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // 'Last monitored activity date is not present when there were no activities'
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: A.iPhone)
            #expect(richard.json["lastMonitoredActivityDate"] == nil && richard.requestingDevice?["lastMonitoredActivityDate"] == nil)

            // '… after one activity': the classifier sees YouTube on W-1 Thu 15:00 (no goal needed)
            try await A.networkActivity(server, richard, "YouTube", at: A.at(1, 4, 15, 0))
            richard = try await richard.reload()
            #expect(richard.json["lastMonitoredActivityDate"] as? String == UserCalendar.day(A.at(1, 4, 15, 0)))
            #expect(richard.requestingDevice?["lastMonitoredActivityDate"] as? String == UserCalendar.day(A.at(1, 4, 15, 0)))

            // '… after multiple activities': app activity from Friday 23:55 to Saturday 00:10 ends on Saturday
            try await A.appActivity(server, richard, "NU.nl", A.at(1, 5, 23, 55), A.at(1, 6, 0, 10))
            richard = try await richard.reload()
            #expect(richard.json["lastMonitoredActivityDate"] as? String == UserCalendar.day(A.at(1, 6, 0, 10)))
            // an older report does not move it back
            try await A.networkActivity(server, richard, "YouTube", at: A.at(1, 2, 9, 0))
            #expect(try await richard.reload().json["lastMonitoredActivityDate"] as? String == UserCalendar.day(A.at(1, 6, 0, 10)))
        }
    }

    @Test(arguments: TestDatabase.available)
    func basicBuddyTestRichardSeesBobsLastSeenInfo(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richardUser = try await server.createUser(firstName: "Richard", nickname: "RQ")
            let bobUser = try await server.createUser(firstName: "Bob", nickname: "BD", extra: A.iPhone)
            try await BuddyTests.connect(server, richard: richardUser, bob: bobUser)
            _ = try await server.messages(richardUser)
            func richard() async throws -> YonaApp {
                try await YonaApp(server: server, json: [:], password: richardUser.password).reloaded(
                    from: "\(server.baseURL)\(richardUser.profilePath)")
            }
            let bob = try await YonaApp(server: server, json: [:], password: bobUser.password).reloaded(
                from: "\(server.baseURL)\(bobUser.profilePath)")
            func buddyBob() async throws -> [String: Any]? {
                (value(try await richard().json, "_embedded", "yona:buddies", "_embedded", "yona:buddies") as? [[String: Any]])?.first
            }
            // 'Richard sees Bob's "last seen" info before any activity': none
            #expect(try await buddyBob()?["lastMonitoredActivityDate"] == nil)
            // '… after one activity': Bob's device's day
            try await A.networkActivity(server, bob, "YouTube", at: A.at(1, 4, 15, 0))
            let bobDevice = try await bob.reload().requestingDevice
            #expect(try await buddyBob()?["lastMonitoredActivityDate"] as? String == UserCalendar.day(A.at(1, 4, 15, 0)))
            #expect(bobDevice?["lastMonitoredActivityDate"] as? String == UserCalendar.day(A.at(1, 4, 15, 0)))
        }
    }
}
