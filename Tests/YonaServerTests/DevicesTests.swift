import Foundation
import NIOHTTP1
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer

/// api.md "Devices": the owner's devices, the Instance ID the app sends, openApp.
@Suite struct DevicesTests {
    /// The first device of a user, as the profile lists it.
    static func firstDevice(_ server: TestServer, _ user: TestUser) async throws -> (id: String, json: [String: Any]) {
        let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
        let device = try #require(value(profile.json, "_embedded", "yona:devices", "_embedded", "yona:devices", 0) as? [String: Any])
        let href = try #require(value(device, "_links", "self", "href") as? String)
        return (try #require(URLComponents(string: href)?.path.split(separator: "/").last.map(String.init)), device)
    }

    @Test(arguments: TestDatabase.available)
    func appSendsAndRefreshesItsInstanceID(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let user = try await server.createUser()
            let (deviceID, _) = try await Self.firstDevice(server, user)
            let devicePath = "\(user.path)/devices/\(deviceID)"
            // act: the app sends its Instance ID, then only renames
            let first = try await server.request(
                .PUT, devicePath, headers: user.passwordHeader,
                json: ["name": "Phone", "firebaseInstanceId": "fiid-first"])
            let renamed = try await server.request(.PUT, devicePath, headers: user.passwordHeader, json: ["name": "My phone"])
            let refreshed = try await server.request(
                .PUT, devicePath, headers: user.passwordHeader,
                json: ["name": "My phone", "firebaseInstanceId": "fiid-second"])
            // check
            #expect(first.status == 200, "\(first.text)")
            #expect(first.json["firebaseInstanceId"] as? String == "fiid-first")
            #expect(value(first.json, "_links", "curies") != nil)
            #expect(renamed.json["name"] as? String == "My phone")
            #expect(renamed.json["firebaseInstanceId"] as? String == "fiid-first")
            #expect(refreshed.json["firebaseInstanceId"] as? String == "fiid-second")
            let listed = try await server.request(.GET, "\(user.path)/devices/", headers: user.passwordHeader)
            #expect(listed.status == 200)
            #expect(value(listed.json, "_embedded", "yona:devices", 0, "firebaseInstanceId") as? String == "fiid-second")
            let one = try await server.request(.GET, devicePath, headers: user.passwordHeader)
            #expect(one.json["name"] as? String == "My phone")
        }
    }

    @Test(arguments: TestDatabase.available)
    func openAppRecordsVersionDayAndOperatingSystemOnce(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            let (deviceID, before) = try await Self.firstDevice(server, user)
            #expect(before["operatingSystem"] as? String == "UNKNOWN")
            let openApp = "\(user.path)/devices/\(deviceID)/openApp"
            let opened = try await server.request(
                .POST, openApp, headers: user.passwordHeader + [("Yona-App-Version", "IOS/12/1.4")],
                json: ["operatingSystem": "IOS", "appVersion": "1.4", "appVersionCode": 12])
            #expect(opened.status == 204, "\(opened.text)")
            let (_, after) = try await Self.firstDevice(server, user)
            #expect(after["operatingSystem"] as? String == "IOS")
            #expect(after["appLastOpenedDate"] as? String == UserCalendar.day(Date()))
            let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
            #expect(profile.json["appLastOpenedDate"] as? String == UserCalendar.day(Date()))
            let switched = try await server.request(
                .POST, openApp, headers: user.passwordHeader,
                json: ["operatingSystem": "ANDROID", "appVersion": "1.4", "appVersionCode": 12])
            #expect(switched.status == 400)
            #expect(switched.errorCode == "error.device.cannot.switch.operating.system")
            let unknownOS = try await server.request(
                .POST, openApp, headers: user.passwordHeader,
                json: ["operatingSystem": "UNKNOWN", "appVersion": "1.4", "appVersionCode": 12])
            #expect(unknownOS.errorCode == "error.device.unknown.operating.system")
        }
    }

    @Test(arguments: TestDatabase.available)
    func deviceErrors(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            let (deviceID, _) = try await Self.firstDevice(server, user)
            let devicePath = "\(user.path)/devices/\(deviceID)"
            let cases: [(String, HTTPMethod, String, [String: Any]?, Int, String)] = [
                ("name too long", .PUT, devicePath, ["name": String(repeating: "n", count: 21)], 400, "error.device.invalid.device.name"),
                ("name with colon", .PUT, devicePath, ["name": "a:b"], 400, "error.device.invalid.device.name"),
                ("extra property", .PUT, devicePath, ["name": "x", "operatingSystem": "IOS"], 400, "error.request.extra.property"),
                ("unknown device", .GET, "\(user.path)/devices/\(UUID())", nil, 404, "error.device.not.found.id"),
                ("malformed device id", .GET, "\(user.path)/devices/nope", nil, 400, "error.invalid.uuid"),
                ("last device", .DELETE, devicePath, nil, 400, "error.device.cannot.delete.last.one"),
            ]
            for (name, method, path, body, status, code) in cases {
                let response = try await server.request(method, path, headers: user.passwordHeader, json: body)
                #expect(response.status == status, "\(name)")
                #expect(response.errorCode == code, "\(name): \(response.text)")
            }
            let noPassword = try await server.request(.GET, "\(user.path)/devices/")
            #expect(noPassword.errorCode == "error.missing.password.header")
        }
    }
}
