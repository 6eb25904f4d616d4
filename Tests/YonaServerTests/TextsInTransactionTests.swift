import Fluent
import Foundation
import SQLKit
import Testing

@testable import YonaAPI
@testable import YonaServer
@testable import YonaStore

/// Issue 13: a text is queued in the transaction of the change that causes it, so the two exist together or not at
/// all. The fault is injected where a crash would strike: the text outbox refuses rows. Before, the change
/// committed first and its code was lost.
@Suite struct TextsInTransactionTests {
    /// Makes every insert into `text_outbox` fail (the table is moved away), as a crash between the change and its
    /// text would lose it.
    static func breakTheOutbox(_ server: TestServer) async throws {
        try await (server.app.db as! any SQLDatabase).raw("ALTER TABLE text_outbox RENAME TO text_outbox_away").run()
    }

    static func repairTheOutbox(_ server: TestServer) async throws {
        try await (server.app.db as! any SQLDatabase).raw("ALTER TABLE text_outbox_away RENAME TO text_outbox").run()
    }

    @Test(arguments: TestDatabase.available)
    func aNumberIsNeverChangedOrRegisteredWithoutItsCode(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let profile = try await server.request(.GET, richard.profilePath, headers: richard.passwordHeader)
            let edit = try #require(value(profile.json, "_links", "edit", "href") as? String)
            let newNumber = randomMobileNumber()
            let body: [String: Any] = [
                "firstName": profile.json["firstName"] as Any, "lastName": profile.json["lastName"] as Any, "nickname": "RQ",
                "mobileNumber": newNumber, "yonaPassword": richard.password,
            ]
            let freshNumber = randomMobileNumber()
            try await Self.breakTheOutbox(server)

            // a number change whose code cannot be queued changes nothing
            let changed = try await server.request(.PUT, edit, headers: richard.passwordHeader, json: body)
            #expect(changed.status >= 500, "\(changed.text)")
            let after = try await server.request(.GET, richard.profilePath, headers: richard.passwordHeader)
            #expect(after.json["mobileNumber"] as? String == richard.mobileNumber)

            // an account whose code cannot be queued is not made
            let created = try await server.request(
                .POST, "/users/", json: ["firstName": "New", "lastName": "User", "nickname": "nu", "mobileNumber": freshNumber])
            #expect(created.status >= 500, "\(created.text)")

            // once texts can be queued again, both work (the number was not taken without its code)
            try await Self.repairTheOutbox(server)
            let retried = try await server.request(
                .POST, "/users/", json: ["firstName": "New", "lastName": "User", "nickname": "nu", "mobileNumber": freshNumber])
            #expect(retried.status == 201, "\(retried.text)")
            #expect(try await server.request(.PUT, edit, headers: richard.passwordHeader, json: body).status == 200)
            let moved = try await server.request(.GET, richard.profilePath, headers: richard.passwordHeader)
            #expect(moved.json["mobileNumber"] as? String == newNumber)
        }
    }
}
