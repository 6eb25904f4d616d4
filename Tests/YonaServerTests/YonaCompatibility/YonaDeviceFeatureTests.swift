import Foundation
import Testing

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaServer

/// Yona's `DeviceTest` and `DeviceManagementTest` features that concern what exists here, walked through the links
/// the app holds, on SQLite and PostgreSQL. Each test names the Groovy feature it follows.
@Suite struct YonaDeviceFeatureTests {
    static let androidInstanceID = UUID().uuidString
    static var androidDevice: [String: Any] {
        [
            "deviceName": "John's S8", "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "9.9.9",
            "deviceAppVersionCode": 999, "deviceFirebaseInstanceId": androidInstanceID,
        ]
    }

    @Test("DeviceTest: Create John Doe with an Android device", arguments: TestDatabase.available)
    func createWithAndroidDevice(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let john = try await YonaApp.add(server, firstName: "John", nickname: "JD", device: Self.androidDevice)
            let reloaded = try await john.reload()
            YonaAssertions.assertUser(reloaded.json)
            let device = try #require(reloaded.requestingDevice)
            #expect(device["name"] as? String == "John's S8")
            #expect(device["operatingSystem"] as? String == "ANDROID")
            #expect(device["appLastOpenedDate"] as? String == YonaAssertions.today)
            #expect(device["firebaseInstanceId"] as? String == Self.androidDevice["deviceFirebaseInstanceId"] as? String)
            let devicePath = try #require(YonaAssertions.stripped(value(device, "_links", "self", "href") as? String))
            #expect(value(device, "_links", "yona:postOpenAppEvent", "href") as? String == "\(devicePath)/openApp")
            #expect(value(device, "_links", "yona:appActivity", "href") as? String == "\(devicePath)/appActivity/")
        }
    }

    @Test(
        "DeviceTest: Richard posts app opened event with a valid operating system and app version; Try to post app opened event with different operating system; Try to post app opened event with an invalid version code (negative)",
        arguments: TestDatabase.available)
    func appOpenedEvents(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await YonaApp.add(
                server, firstName: "Richard", nickname: "RQ",
                device: [
                    "deviceName": "Richard's iPhone", "deviceOperatingSystem": "IOS", "deviceAppVersion": "9.9.9", "deviceAppVersionCode": 999,
                ])
            let openApp = try #require(value(richard.requestingDevice, "_links", "yona:postOpenAppEvent", "href") as? String)
            // Yona's test client sends the version code as a JSON string
            let valid = try await server.request(
                .POST, openApp, headers: richard.headers,
                json: ["operatingSystem": "IOS", "appVersion": "9.9.9", "appVersionCode": "999"])
            #expect(valid.status == 204, "\(valid.text)")
            let otherOS = try await server.request(
                .POST, openApp, headers: richard.headers,
                json: ["operatingSystem": "ANDROID", "appVersion": "9.9.9", "appVersionCode": "999"])
            #expect(otherOS.errorCode == "error.device.cannot.switch.operating.system")
            let negative = try await server.request(
                .POST, openApp, headers: richard.headers,
                json: ["operatingSystem": "IOS", "appVersion": "9.9.9", "appVersionCode": "-2"])
            #expect(negative.status == 400)
            #expect(negative.errorCode == "error.device.invalid.version.code")
        }
    }

    @Test("DeviceTest: Try to post incomplete app opened event", arguments: TestDatabase.available)
    func incompleteAppOpenedEvent(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let john = try await YonaApp.add(server, firstName: "John", nickname: "JD")
            let openApp = try #require(value(john.requestingDevice, "_links", "yona:postOpenAppEvent", "href") as? String)
            let rows: [(String?, String?, Int?, Int)] = [
                ("IOS", "1.1", 5000, 204), (nil, nil, nil, 204), ("IOS", nil, nil, 400), (nil, "1.1", nil, 400),
                (nil, nil, 5000, 400), (nil, "1.1", 5000, 400), ("IOS", "1.1", nil, 400), ("IOS", nil, 5000, 400),
                // Yona's code was an `int`: 0 is no code, so missing beside an operating system and nothing without one
                ("IOS", "1.1", 0, 400), (nil, nil, 0, 204),
            ]
            for (operatingSystem, appVersion, appVersionCode, status) in rows {
                var body: [String: Any] = [:]
                if let operatingSystem { body["operatingSystem"] = operatingSystem }
                if let appVersion { body["appVersion"] = appVersion }
                if let appVersionCode { body["appVersionCode"] = appVersionCode }
                let response = try await server.request(.POST, openApp, headers: john.headers, json: body)
                #expect(response.status == status, "\(body): \(response.text)")
            }
        }
    }

    @Test("DeviceTest: John's device is autoregistered as Android upon reporting app activity", arguments: TestDatabase.available)
    func autoregisteredAsAndroid(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let john = try await YonaApp.add(server, firstName: "John", nickname: "JD")
            #expect(john.requestingDevice?["operatingSystem"] as? String == "UNKNOWN")
            let appActivity = try #require(value(john.requestingDevice, "_links", "yona:appActivity", "href") as? String)
            let now = Date()
            let posted = try await server.request(
                .POST, appActivity, headers: john.headers,
                json: [
                    "deviceDateTime": YonaDateFormat.timestamp(now),
                    "activities": [
                        [
                            "application": "Poker App", "startTime": YonaDateFormat.timestamp(now.addingTimeInterval(-3600)),
                            "endTime": YonaDateFormat.timestamp(now),
                        ]
                    ],
                ])
            #expect(posted.status == 204, "\(posted.text)")
            let reloaded = try await john.reload()
            #expect(reloaded.devices.count == 1)
            #expect(reloaded.requestingDevice?["name"] as? String == "First device")
            #expect(reloaded.requestingDevice?["operatingSystem"] as? String == "ANDROID")
        }
    }

    @Test("DeviceManagementTest: Set and get new device request", arguments: TestDatabase.available)
    func setAndGetNewDeviceRequest(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ")
            let requestURL = try #require(richard.link("yona:newDeviceRequest"))
            let set = try await server.request(.PUT, requestURL, headers: richard.headers, json: ["newDeviceRequestPassword": "Temp123"])
            #expect(set.status == 204)
            let got = try await server.request(.GET, requestURL)
            #expect(got.status == 200)
            #expect(got.json.keys.contains("yonaPassword") && got.json["yonaPassword"] is NSNull)
            #expect(value(got.json, "_links", "self", "href") as? String == requestURL)
            #expect(value(got.json, "_links", "edit", "href") as? String == requestURL)
            #expect(YonaAssertions.stripped(value(got.json, "_links", "yona:user", "href") as? String) == YonaAssertions.stripped(richard.url))
        }
    }

    @Test("DeviceManagementTest: Set and get new device request, with the number's + as Yona's suite sends it", arguments: TestDatabase.available)
    func newDeviceRequestWithALiteralPlus(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ")
            let number = try #require(richard.json["mobileNumber"] as? String)
            let path = "/newDeviceRequests/\(number)" // a raw "+", not %2B
            let set = try await server.request(.PUT, path, headers: richard.headers, json: ["newDeviceRequestPassword": "Temp123"])
            #expect(set.status == 204, "\(set.text)")
            let got = try await server.request(.GET, path, headers: [("Yona-NewDeviceRequestPassword", "Temp123")])
            #expect(got.status == 200 && got.json["yonaPassword"] as? String == richard.password, "\(got.text)")
            let cleared = try await server.request(.DELETE, path, headers: richard.headers)
            #expect(cleared.status == 204, "\(cleared.text)")
            let after = try await server.request(.GET, path)
            #expect(after.status == 400 && after.errorCode == "error.no.device.request.present", "\(after.text)")
        }
    }

    @Test(
        "DeviceManagementTest: Richard updates his device firebase instance id; device is updated but not disclosed to Bob",
        arguments: TestDatabase.available)
    func instanceIDWithSpaces(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ")
            let edit = try #require(value(richard.requestingDevice, "_links", "edit", "href") as? String)
            let updated = try await server.request(
                .PUT, edit, headers: richard.headers,
                json: ["name": "First device", "firebaseInstanceId": "New firebase instance id"])
            #expect(updated.status == 200, "\(updated.text)")
            #expect(updated.json["firebaseInstanceId"] as? String == "New firebase instance id")
        }
    }

    @Test(
        "AppActivityTest: Try send app activity with end before start; Try send app activity with end in future; Try send app activity with start in future",
        arguments: TestDatabase.available)
    func appActivityErrors(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ")
            let appActivity = try #require(value(richard.requestingDevice, "_links", "yona:appActivity", "href") as? String)
            let now = Date()
            let cases: [(Date, Date, String)] = [
                (now.addingTimeInterval(-3600), now.addingTimeInterval(-3600 - 15 * 60), "error.analysis.invalid.app.activity.data.end.before.start"),
                (now, now.addingTimeInterval(60), "error.analysis.invalid.app.activity.data.ends.in.future"),
                (now.addingTimeInterval(60), now.addingTimeInterval(120), "error.analysis.invalid.app.activity.data.starts.in.future"),
            ]
            for (start, end, code) in cases {
                let response = try await server.request(
                    .POST, appActivity, headers: richard.headers,
                    json: [
                        "deviceDateTime": YonaDateFormat.timestamp(now),
                        "activities": [
                            ["application": "Poker App", "startTime": YonaDateFormat.timestamp(start), "endTime": YonaDateFormat.timestamp(end)]
                        ],
                    ])
                #expect(response.status == 400, "\(code)")
                #expect(response.errorCode == code, "\(response.text)")
            }
        }
    }

    @Test(
        "DeviceTest: requests without Accept, with an Accept-Language the server does not speak, and empty-body POSTs",
        arguments: TestDatabase.available)
    func androidRequestShapes(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let john = try await YonaApp.add(server, firstName: "John", nickname: "JD")
            let serbian = try await server.request(.GET, john.url, headers: john.headers + [("Accept-Language", "sr-RS-#Latn")])
            #expect(serbian.status == 200)
            #expect(serbian.headers.first(name: "Content-Language") == "en-US")
            let openApp = try #require(value(john.requestingDevice, "_links", "yona:postOpenAppEvent", "href") as? String)
            let empty = try await server.request(.POST, openApp, headers: john.headers, body: Data(), contentType: nil)
            #expect(empty.status == 204, "an empty POST is an empty object: \(empty.text)")
        }
    }

    @Test("DeviceTest: Use different app version headers; DeviceManagementTest: Try add device with null values")
    func messagesNameWhatTheyRefuse() async throws {
        try await withServer(.sqlite) { server in
            let john = try await YonaApp.add(server, firstName: "John", nickname: "JD")
            let cases: [(String, Int, String?)] = [
                ("ANDROID/123/1.2 build 360", 200, nil), ("IOS/123/1.2 (I'm Rich)", 200, nil), ("IOS/123/1.2", 200, nil),
                ("IOS/abc/1.2", 400, "contains an invalid version code: 'abc'. Must be an integer value > 0"),
                ("IOS/-1/1.2", 400, "contains an invalid version code: '-1'. Must be an integer value > 0"),
                ("IOS/0/1.2", 400, "contains an invalid version code: '0'. Must be an integer value > 0"),
                ("ANDROID/123", 400, "is invalid: 'ANDROID/123'. Should follow the format"),
                ("ANDROID/123/a/b", 400, "is invalid: 'ANDROID/123/a/b'. Should follow the format"),
                // as Yona's suite writes them: the Android form, and a header present with an empty value
                ("ANDROID/abc/1.2 build 360", 400, "contains an invalid version code: 'abc'. Must be an integer value > 0"),
                ("ANDROID/-1/1.2 build 360", 400, "contains an invalid version code: '-1'. Must be an integer value > 0"),
                ("ANDROID/0/1.2 build 360", 400, "contains an invalid version code: '0'. Must be an integer value > 0"),
                ("", 400, "is invalid: ''. Should follow the format"),
            ]
            for (header, status, message) in cases {
                let response = try await server.request(.GET, john.url, headers: john.headers + [("Yona-App-Version", header)])
                #expect(response.status == status, "\(header)")
                if let message { #expect((response.json["message"] as? String)?.contains(message) == true, "\(header): \(response.text)") }
            }
            // a device registration without its fields names the first one missing
            let number = try #require(john.json["mobileNumber"] as? String)
            let requestURL = try #require(john.link("yona:newDeviceRequest"))
            _ = try await server.request(.PUT, requestURL, headers: john.headers, json: ["newDeviceRequestPassword": "Temp123"])
            let register = try #require(value(try await server.request(.GET, requestURL).json, "_links", "yona:registerDevice", "href") as? String)
            let nulls = try await server.request(
                .POST, register, headers: [("Yona-NewDeviceRequestPassword", "Temp123")],
                json: ["name": NSNull(), "operatingSystem": NSNull(), "appVersion": NSNull(), "appVersionCode": NSNull()])
            #expect(nulls.errorCode == "error.request.missing.property", "\(number)")
            #expect((nulls.json["message"] as? String)?.hasPrefix("Mandatory property 'name'") == true, "\(nulls.text)")
        }
    }

    @Test func minimumAppVersionsAreConfiguredPerSystem() throws {
        let config = try AppConfig.fromEnvironment(["YONA_MIN_APP_VERSION_ANDROID": "218/1.2", "YONA_MIN_APP_VERSION_IOS": "166"])
        #expect(config.minimumAppVersions == .init(android: .init(code: 218, name: "1.2"), ios: .init(code: 166, name: "166")))
        #expect(try AppConfig.fromEnvironment([:]).minimumAppVersions == .init(), "no minimum unless configured")
        #expect(throws: AppConfig.Invalid.self) { try AppConfig.fromEnvironment(["YONA_MIN_APP_VERSION_IOS": "one/1.2"]) }
    }

    @Test("DeviceTest: Try to post app opened event for a too old app version", arguments: TestDatabase.available)
    func tooOldAppVersion(db: TestDatabase) async throws {
        try await withServer(
            db, adjust: { $0.minimumAppVersions = .init(android: .init(code: 218, name: "1.2"), ios: .init(code: 166, name: "1.2")) }
        ) {
            server in
            // an app that new is welcome; registering an older one is refused with the same code
            let richard = try await YonaApp.add(
                server, firstName: "Richard", nickname: "RQ",
                device: ["deviceName": "iPhone", "deviceOperatingSystem": "IOS", "deviceAppVersion": "1.2.0", "deviceAppVersionCode": 166])
            let tooOld = try await server.request(
                .POST, "/users/",
                json: [
                    "firstName": "Old", "lastName": "App", "nickname": "OA", "mobileNumber": randomMobileNumber(),
                    "deviceName": "Phone", "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "1.0", "deviceAppVersionCode": 217,
                ])
            #expect(tooOld.status == 400 && tooOld.errorCode == "error.device.app.version.not.supported")
            #expect(
                tooOld.json["message"] as? String
                    == "Yona app is out of date and must be updated. Actual version is '1.0' but oldest supported version for 'ANDROID' is '1.2'")
            // Yona's feature: the app opened with version 9.9.9 but code 2
            let openApp = try #require(value(richard.requestingDevice, "_links", "yona:postOpenAppEvent", "href") as? String)
            let response = try await server.request(
                .POST, openApp, headers: richard.headers, json: ["operatingSystem": "IOS", "appVersion": "9.9.9", "appVersionCode": 2])
            #expect(response.status == 400 && response.errorCode == "error.device.app.version.not.supported")
            #expect(
                response.json["message"] as? String
                    == "Yona app is out of date and must be updated. Actual version is '9.9.9' but oldest supported version for 'IOS' is '1.2'")
            #expect(
                try await server.request(
                    .POST, openApp, headers: richard.headers, json: ["operatingSystem": "IOS", "appVersion": "1.3", "appVersionCode": 170]
                ).status == 204)
        }
    }
}
