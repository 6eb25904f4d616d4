import Foundation
import Testing
@testable import YonaServer

/// A user as a test knows it after creating it through the API.
struct TestUser: Sendable {
    let id: String
    let password: String
    let mobileNumber: String
    let firstName: String
    let nickname: String

    var passwordHeader: [(String, String)] { [("Yona-Password", password)] }
    var path: String { "/users/\(id)" }
    var profilePath: String { "/users/\(id)?requestingUserId=\(id)" }
}

/// A distinctive random number in the Dutch mobile range, so parallel tests never collide.
func randomMobileNumber() -> String {
    "+316" + String(format: "%08u", UInt32.random(in: 0..<100_000_000))
}

extension TestServer {
    /// Creates (and by default confirms) a user with distinctive names.
    func createUser(firstName: String = "Fn\(UInt32.random(in: 100_000...999_999))",
                    nickname: String = "Nick\(UInt32.random(in: 100_000...999_999))",
                    mobileNumber: String = randomMobileNumber(), extra: [String: Any] = [:],
                    confirm: Bool = true) async throws -> TestUser {
        var body: [String: Any] = ["firstName": firstName, "lastName": "Ln\(firstName)", "nickname": nickname,
                                   "mobileNumber": mobileNumber]
        body.merge(extra) { $1 }
        let created = try await request(.POST, "/users/", json: body)
        try #require(created.status == 201, "create: \(created.text)")
        let user = TestUser(id: try #require(created.json["_links"].flatMap { value($0, "self", "href") as? String }
                                .flatMap { URLComponents(string: $0)?.path.split(separator: "/").last.map(String.init) }),
                            password: try #require(created.json["yonaPassword"] as? String),
                            mobileNumber: mobileNumber, firstName: firstName, nickname: nickname)
        if confirm {
            let confirmed = try await request(.POST, "\(user.path)/confirmMobileNumber", headers: user.passwordHeader,
                                              json: ["code": "1234"])
            try #require(confirmed.status == 200, "confirm: \(confirmed.text)")
        }
        return user
    }
}
