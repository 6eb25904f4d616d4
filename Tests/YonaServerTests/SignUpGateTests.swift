import Foundation
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaStore

/// Yona's sign-up gating (operations.md "Limiting sign-up"): white-listed numbers for free sign-ups and for invited
/// numbers, each switched on by configuration, and a maximum number of users that holds under a parallel rush.
@Suite struct SignUpGateTests {
    static func signUp(_ server: TestServer, _ number: String) async throws -> APIResponse {
        try await server.request(
            .POST, "/users/", json: ["firstName": "Fn", "lastName": "Ln", "nickname": "Nick", "mobileNumber": number])
    }

    static func whiteList(_ server: TestServer, _ number: String) async throws -> APIResponse {
        try await server.request(.POST, "/admin/whiteListedNumbers/", headers: TestServer.bearer, json: ["mobileNumber": number])
    }

    static func invite(_ server: TestServer, by user: TestUser, _ number: String) async throws -> APIResponse {
        try await server.request(
            .POST, "\(user.path)/buddies/", headers: user.passwordHeader,
            json: [
                "_embedded": ["yona:user": ["firstName": "Bob", "lastName": "Dunn", "mobileNumber": number, "emailAddress": "bob@example.com"]],
                "message": "Shall we?", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
            ])
    }

    @Test(arguments: TestDatabase.available)
    func aWhiteListedNumberSignsUpAndAnotherIsRefusedWithYonasCode(db: TestDatabase) async throws {
        try await withServer(db, adjust: { $0.signUp.whiteListFreeSignUp = true }) { server in
            // setup
            let listed = randomMobileNumber()
            let other = randomMobileNumber()
            #expect(try await Self.whiteList(server, listed).status == 201)
            // act
            let refused = try await Self.signUp(server, other)
            let admitted = try await Self.signUp(server, listed)
            // check
            #expect(refused.status == 400)
            #expect(refused.errorCode == "error.number.not.white.listed")
            #expect(refused.json["message"] as? String == "Mobile number '\(other)' does not occur on the white list of allowed numbers")
            #expect(admitted.status == 201, "\(admitted.text)")
            #expect(try await User.query(on: server.app.db).count() == 1)
        }
    }

    @Test(arguments: TestDatabase.available)
    func theWhiteListIsKeptThroughTheAdminAPI(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let first = randomMobileNumber()
            let second = randomMobileNumber()
            // act
            let added = try await Self.whiteList(server, first)
            _ = try await Self.whiteList(server, second)
            let twice = try await Self.whiteList(server, first)
            let invalid = try await Self.whiteList(server, "0612345678")
            let withoutToken = try await server.request(.GET, "/admin/whiteListedNumbers/")
            let listed = try await server.request(.GET, "/admin/whiteListedNumbers/", headers: TestServer.bearer)
            let encoded = first.replacingOccurrences(of: "+", with: "%2B")
            let removed = try await server.request(.DELETE, "/admin/whiteListedNumbers/?mobileNumber=\(encoded)", headers: TestServer.bearer)
            let removedAgain = try await server.request(.DELETE, "/admin/whiteListedNumbers/?mobileNumber=\(encoded)", headers: TestServer.bearer)
            // a NUL (refused by PostgreSQL in a query) is no number: 400, not 500
            let nul = try await server.request(.DELETE, "/admin/whiteListedNumbers/?mobileNumber=%2B316%0012345", headers: TestServer.bearer)
            #expect(nul.errorCode == "error.user.mobile.number.invalid")
            let after = try await server.request(.GET, "/admin/whiteListedNumbers/", headers: TestServer.bearer)
            // check
            #expect(added.status == 201)
            #expect(twice.status == 400)
            #expect(twice.errorCode == "error.number.already.white.listed")
            #expect(invalid.errorCode == "error.user.mobile.number.invalid")
            #expect(withoutToken.status == 401)
            #expect(listed.json["mobileNumbers"] as? [String] == [first, second].sorted())
            #expect(removed.status == 204)
            #expect(removedAgain.errorCode == "error.number.not.white.listed")
            #expect(after.json["mobileNumbers"] as? [String] == [second])
        }
    }

    @Test(arguments: TestDatabase.available)
    func invitedNumbersAreGatedOnlyWhenConfigured(db: TestDatabase) async throws {
        try await withServer(db, adjust: { $0.signUp.whiteListInvitedUsers = true }) { server in
            // setup: free sign-up stays open
            let richard = try await server.createUser()
            let listed = randomMobileNumber()
            #expect(try await Self.whiteList(server, listed).status == 201)
            // act
            let unlisted = randomMobileNumber()
            let refused = try await Self.invite(server, by: richard, unlisted)
            let invited = try await Self.invite(server, by: richard, listed)
            // check
            #expect(refused.status == 400)
            #expect(refused.errorCode == "error.number.not.white.listed")
            #expect(invited.status == 201, "\(invited.text)")
            let numbers = try await User.query(on: server.app.db).all().map(\.mobileNumber)
            #expect(Set(numbers) == [richard.mobileNumber, listed])
        }
    }

    @Test(arguments: TestDatabase.available)
    func theCapRefusesTheNextSignUpAndInvitation(db: TestDatabase) async throws {
        try await withServer(db, adjust: { $0.signUp.maxUsers = 2 }) { server in
            // setup
            let richard = try await server.createUser()
            _ = try await server.createUser()
            // act
            let refused = try await Self.signUp(server, randomMobileNumber())
            let invitation = try await Self.invite(server, by: richard, randomMobileNumber())
            let existing = try await Self.signUp(server, richard.mobileNumber)
            // check
            #expect(refused.status == 400)
            #expect(refused.errorCode == "error.user.maximum.number.reached")
            #expect(invitation.errorCode == "error.user.maximum.number.reached")
            #expect(existing.errorCode == "error.user.exists", "a number with an account is told so first, as by Yona")
            #expect(try await User.query(on: server.app.db).count() == 2)
        }
    }

    /// The attack: many sign-ups at once while one place is left. Counting outside the account's transaction would
    /// let several through.
    @Test(arguments: TestDatabase.available)
    func aParallelRushForTheLastPlacesGetsNoMoreThanTheCap(db: TestDatabase) async throws {
        try await withServer(db, adjust: { $0.signUp.maxUsers = 3 }) { server in
            // setup
            _ = try await server.createUser()
            // act
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<12 { group.addTask { try await Self.signUp(server, randomMobileNumber()).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            // check
            #expect(statuses.filter { $0 == 201 }.count == 2)
            #expect(statuses.filter { $0 == 400 }.count == 10)
            #expect(try await User.query(on: server.app.db).count() == 3)
        }
    }
}
