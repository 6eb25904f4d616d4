import Foundation
import Vapor
import YonaConfig
import YonaDomain
import YonaStore

/// Builds the own-user HAL document the apps expect.
package struct UserRendering {
    package let links: LinkBuilder
    /// The request's locale, for texts stored in several languages (system announcements).
    package var locale: YonaLocale = .fallback
    /// The VPN files the server serves: the requesting device links only those, and shows the SSL root certificate's
    /// issuer name when there is one.
    package var vpnFiles: VPNResources = .none

    /// `requestingDeviceID` is the device the app says it runs on, or the default device when it says none.
    package func ownUser(
        _ user: UnlockedUser, devices: [OwnDevice], goals: [Goal], history: [GoalHistoryItem] = [],
        sides: [UUID: BuddySide] = [:], password: String?, requestingDeviceID: UUID?
    ) -> OwnUserDTO {
        var halLinks = HALLinks(self: links.user(user.id, requestingUserID: user.id, requestingDeviceID: requestingDeviceID))
        halLinks.add("edit", links.user(user.id, requestingDeviceID: requestingDeviceID))
        var embedded: OwnUserDTO.Embedded?
        if user.isConfirmed {
            halLinks.add("yona:messages", links.messages(user.id))
            halLinks.add("yona:dailyActivityReports", links.dailyActivityReports(user.id))
            halLinks.add("yona:weeklyActivityReports", links.weeklyActivityReports(user.id))
            halLinks.add(
                "yona:dailyActivityReportsWithBuddies",
                links.withRequestingDevice(links.dailyActivityReportsWithBuddies(user.id), requestingDeviceID))
            halLinks.add("yona:newDeviceRequest", links.newDeviceRequest(user.mobileNumber))
            halLinks.add("yona:editUserPhoto", links.editUserPhoto(user.id))
            if let photo = user.privateData.photoID { halLinks.add("yona:userPhoto", links.userPhoto(photo)) }
            // As Yona: request a reset, nothing while its code is on the way, then verify, resend or clear.
            switch PinResetService.state(of: user) {
            case .none: halLinks.add("yona:requestPinReset", links.pinResetRequest(user.id))
            case .waiting: break
            case .ready:
                let base = "\(links.user(user.id))/pinResetRequest"
                halLinks.add("yona:verifyPinReset", "\(base)/verify")
                halLinks.add("yona:resendPinResetConfirmationCode", "\(base)/resend")
                halLinks.add("yona:clearPinReset", "\(base)/clear")
            }
            let deviceItems = devices.map { ownDevice($0, of: user, requestingDeviceID: requestingDeviceID, topLevel: false) }
            embedded = .init(
                devices: HALCollection(
                    rel: "yona:devices", items: deviceItems,
                    links: HALLinks(self: links.withRequestingDevice(links.devices(user.id), requestingDeviceID), topLevel: false)),
                goals: HALCollection(
                    rel: "yona:goals", items: goalItems(goals: goals, history: history, of: user),
                    links: HALLinks(self: links.asRequester(links.goals(user.id), user.id), topLevel: false)),
                buddies: HALCollection(
                    rel: "yona:buddies", items: user.privateData.buddies.map { buddy($0, of: user, side: sides[$0.id], topLevel: false) },
                    links: HALLinks(self: links.buddies(user.id), topLevel: false)))
        } else {
            halLinks.add("yona:confirmMobileNumber", links.withRequestingDevice(links.confirmMobileNumber(user.id), requestingDeviceID))
            halLinks.add("yona:resendMobileNumberConfirmationCode", links.resendConfirmationCode(user.id))
        }
        return OwnUserDTO(
            creationTime: YonaDateFormat.timestamp(user.privateData.creationTime),
            appLastOpenedDate: devices.compactMap(\.appLastOpenedDate).max(),
            lastMonitoredActivityDate: devices.compactMap(\.lastMonitoredActivityDate).max(),
            firstName: user.privateData.firstName, lastName: user.privateData.lastName,
            nickname: user.privateData.nickname, mobileNumber: user.mobileNumber,
            yonaPassword: password, _embedded: embedded, _links: halLinks)
    }

    /// An account a buddy created, as the invitee's app sees it through the invitation link: the inviter's names for
    /// it, the number and, as Yona, its Yona password; `self` without the temporary password and `edit` the plain user
    /// (a take-over with that password). An invitation from before invited accounts had a password keeps the link.
    package func invitedUser(_ user: UnlockedUser, password: YonaPassword?, temporaryPassword: String) -> OwnUserDTO {
        var halLinks = HALLinks(self: links.user(user.id, requestingUserID: user.id, requestingDeviceID: nil))
        halLinks.add("edit", password == nil ? links.invitation(user.id, temporaryPassword: temporaryPassword) : links.user(user.id))
        return OwnUserDTO(
            creationTime: YonaDateFormat.timestamp(user.privateData.creationTime), appLastOpenedDate: nil, lastMonitoredActivityDate: nil,
            firstName: user.privateData.firstName, lastName: user.privateData.lastName,
            nickname: user.privateData.nickname, mobileNumber: user.mobileNumber,
            yonaPassword: password?.wireValue, _embedded: nil, _links: halLinks)
    }

    /// A buddy's user as the requester may see it: what the requester's own buddy list holds, and, once the buddy
    /// shares (`sendingStatus` accepted), the buddy's goals and device names from the anonymized side.
    package func buddyUser(_ buddy: PrivateBuddy, side: BuddySide?, requester: UnlockedUser, topLevel: Bool) -> BuddyUserDTO {
        let me = requester.id
        var embedded: BuddyUserDTO.Embedded?
        if buddy.sendingStatus == .accepted {
            let goals =
                (side?.goals ?? []).map { goal in
                    self.goal(goal, ownerID: buddy.userID, editable: false, topLevel: false, requestingUserID: me)
                } + (side?.history ?? []).map { self.goal($0, ownerID: buddy.userID, requestingUserID: me) }
            embedded = .init(
                goals: HALCollection(
                    rel: "yona:goals", items: goals,
                    links: HALLinks(self: links.asRequester(links.goals(buddy.userID), me), topLevel: false)),
                devices: HALCollection(
                    rel: "yona:devices",
                    items: buddyDevices(buddy, side: side),
                    links: HALLinks(self: links.asRequester(links.devices(buddy.userID), me), topLevel: false)))
        }
        // `self`, and the photo the buddy last announced (Yona's `yona:userPhoto`); no curie, as Yona's.
        var halLinks = HALLinks(self: links.user(buddy.userID, requestingUserID: me, requestingDeviceID: nil), topLevel: false)
        if let photo = buddy.photoID { halLinks.add("yona:userPhoto", links.userPhoto(photo)) }
        return BuddyUserDTO(
            firstName: buddy.firstName, lastName: buddy.lastName, nickname: buddy.nickname, mobileNumber: buddy.mobileNumber,
            appLastOpenedDate: side?.appLastOpenedDate,
            _embedded: embedded, _links: halLinks)
    }

    /// A sharing buddy's devices by the names the buddy announced, each with its VPN flag from the anonymized
    /// side (false for a device whose anonymized row the announcement did not carry).
    private func buddyDevices(_ buddy: PrivateBuddy, side: BuddySide?) -> [BuddyUserDTO.BuddyDeviceDTO] {
        let names = buddy.deviceNames ?? []
        let ids = buddy.deviceAnonymizedIDs ?? []
        return names.enumerated().map { index, name in
            let connected = index < ids.count && ids.count == names.count && (side?.vpnConnectedDevices.contains(ids[index]) ?? false)
            return BuddyUserDTO.BuddyDeviceDTO(name: name, vpnConnected: connected)
        }
    }

    /// One's own goal: its links carry the owner as requester, as Yona's (`/users/{u}/goals/{g}?requestingUserId={u}`),
    /// the same href the reports give it as `yona:goal`, which the apps compare.
    package func goal(_ goal: Goal, of user: UnlockedUser, topLevel: Bool) -> GoalDTO {
        self.goal(goal, ownerID: user.id, editable: !goal.isOnMandatoryCategory, topLevel: topLevel, requestingUserID: user.id)
    }

    /// `requestingUserID`: who asks (the owner for one's own goals, the buddy for a buddy's); the links carry it.
    package func goal(_ goal: Goal, ownerID: UUID, editable: Bool, topLevel: Bool, requestingUserID: UUID? = nil) -> GoalDTO {
        goalDTO(
            id: goal.id!, spec: goal.spec,
            categoryID: goal.$activityCategory.id, creationTime: goal.creationTime, historyItem: false,
            ownerID: ownerID, editable: editable, topLevel: topLevel, requestingUserID: requestingUserID)
    }

    /// An earlier version of a goal (Yona's history item): never editable.
    package func goal(_ item: GoalHistoryItem, ownerID: UUID, requestingUserID: UUID? = nil, topLevel: Bool = false) -> GoalDTO {
        goalDTO(
            id: item.id!, spec: item.spec,
            categoryID: item.$activityCategory.id, creationTime: item.creationTime, historyItem: true,
            ownerID: ownerID, editable: false, topLevel: topLevel, requestingUserID: requestingUserID)
    }

    /// A user's goals as Yona lists them: the goals in force, then their earlier versions.
    package func goalItems(goals: [Goal], history: [GoalHistoryItem], of user: UnlockedUser) -> [GoalDTO] {
        goals.map { goal($0, of: user, topLevel: false) } + history.map { goal($0, ownerID: user.id, requestingUserID: user.id) }
    }

    private func goalDTO(
        id: UUID, spec: GoalSpec, categoryID: UUID, creationTime: Date, historyItem: Bool,
        ownerID: UUID, editable: Bool, topLevel: Bool, requestingUserID: UUID?
    ) -> GoalDTO {
        let href = requestingUserID.map { links.asRequester(links.goal(ownerID, id), $0) } ?? links.goal(ownerID, id)
        var halLinks = HALLinks(self: href, topLevel: topLevel)
        if editable { halLinks.add("edit", href) }
        halLinks.add("yona:activityCategory", links.activityCategory(categoryID))
        let maxDuration: Int? = if case .budget(let minutes) = spec { minutes } else { nil }
        let zones: [String]? = if case .timeZone(let zones) = spec { zones } else { nil }
        return GoalDTO(
            type: spec.type, maxDurationMinutes: maxDuration, zones: zones, spreadCells: spec.spreadCells,
            creationTime: YonaDateFormat.timestamp(creationTime), historyItem: historyItem, _links: halLinks)
    }

    package func activityCategory(_ category: ActivityCategory, locale: YonaLocale, topLevel: Bool) -> ActivityCategoryDTO {
        ActivityCategoryDTO(
            name: category.names[locale.rawValue] ?? category.names[YonaLocale.fallback.rawValue] ?? "",
            description: category.descriptions[locale.rawValue] ?? category.descriptions[YonaLocale.fallback.rawValue] ?? "",
            _links: HALLinks(self: links.activityCategory(category.id!), topLevel: topLevel))
    }

    package func adminActivityCategory(_ category: ActivityCategory, topLevel: Bool) -> AdminActivityCategoryDTO {
        AdminActivityCategoryDTO(
            id: category.id!.lowercasedString, localizableName: category.names, localizableDescription: category.descriptions,
            smoothwallCategories: category.classifierCategories, applications: category.applications,
            mandatoryNoGo: category.mandatoryNoGo, _links: HALLinks(self: links.adminActivityCategory(category.id!), topLevel: topLevel))
    }

    /// A device as its owner sees it; the device the app runs on also carries the links only it follows.
    package func ownDevice(_ device: OwnDevice, of user: UnlockedUser, requestingDeviceID: UUID?, topLevel: Bool) -> OwnDeviceDTO {
        let path = links.device(user.id, device.device.id)
        let href = links.withRequestingDevice(path, requestingDeviceID)
        let isRequesting = device.device.id == requestingDeviceID
        var halLinks = HALLinks(self: href, topLevel: topLevel)
        halLinks.add("edit", href)
        if isRequesting {
            halLinks.add("yona:postOpenAppEvent", path + "/openApp")
            halLinks.add("yona:appActivity", path + "/appActivity/")
            halLinks.add("yona:postVpnStatusEvent", path + "/vpnStatus/")
            if vpnFiles.sslRootCertificate != nil { halLinks.add("yona:sslRootCert", links.sslRootCertificate()) }
            if vpnFiles.mobileConfigTemplate != nil { halLinks.add("yona:appleMobileConfig", path + "/apple.mobileconfig") }
        }
        return OwnDeviceDTO(
            name: device.device.name, operatingSystem: device.operatingSystem.rawValue,
            registrationTime: YonaDateFormat.timestamp(device.device.registrationTime),
            appLastOpenedDate: device.appLastOpenedDate, lastMonitoredActivityDate: device.lastMonitoredActivityDate,
            vpnConnected: device.vpnConnected,
            requestingDevice: isRequesting,
            sslRootCertCN: isRequesting ? vpnFiles.sslRootCertificateCommonName : nil,
            firebaseInstanceId: device.firebaseInstanceID,
            notificationsEnabled: device.notificationsEnabled,
            vpnProfile: .init(
                vpnLoginID: VPNLogin.id(user.privateData.userAnonymizedID, deviceIndex: device.deviceIndex),
                vpnPassword: device.device.vpnPassword ?? "",
                _links: vpnFiles.ovpnProfile == nil ? nil : .init(ovpnProfile: HALLink(href: links.ovpnProfile()))),
            _links: halLinks)
    }
}

/// A sharing buddy's anonymized side, as the buddy views show it.
package struct BuddySide: Sendable {
    package let goals: [Goal]
    package let history: [GoalHistoryItem]
    package let appLastOpenedDate: String?
    /// The buddy's "last seen" (Yona's `lastMonitoredActivityDate` on the buddy).
    package var lastMonitoredActivityDate: String? = nil
    /// The buddy's devices (anonymized ids) whose VPN is up.
    package var vpnConnectedDevices: Set<UUID> = []
}

extension Request {
    /// The own-user document with what it embeds (devices and goals), loaded for this user.
    /// Without a `requestingDeviceID` the user's default device (the lowest index) is the requesting one, as Yona
    /// does: the apps expect one device marked.
    package func ownUserResponse(
        _ user: UnlockedUser, password: String?, requestingDeviceID: UUID?,
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let (goals, history, sides, devices) =
            user.isConfirmed ? try await goalsAndBuddySides(of: user, withOwn: true) : ([], [], [:], try await users.devices(of: user))
        let requesting = requestingDeviceID ?? devices.min { $0.deviceIndex < $1.deviceIndex }?.device.id
        return try .hal(
            rendering.ownUser(
                user, devices: devices, goals: goals, history: history, sides: sides, password: password,
                requestingDeviceID: requesting), status: status)
    }

    /// What the anonymized side shows of each buddy that shares (its goals, history items and the day its app was
    /// last opened), by buddy id; `only` one buddy where a request is about one. Three queries, however many buddies.
    package func buddySides(of user: UnlockedUser, only buddyID: UUID? = nil) async throws -> [UUID: BuddySide] {
        try await goalsAndBuddySides(of: user, only: buddyID, withOwn: false).sides
    }

    /// The buddy sides and, `withOwn`, the user's own goals, history items and devices read with them, in two round
    /// trips however many buddies: the goals (with their categories and history items) of the user and every sharing
    /// buddy in one, the devices (the user's own and the buddies' facts) in the other. A profile read took seven
    /// round trips when it read each part apart, and round trips, not rows, were its cost (docs/performance.md).
    package func goalsAndBuddySides(
        of user: UnlockedUser, only buddyID: UUID? = nil, withOwn: Bool
    ) async throws -> (goals: [Goal], history: [GoalHistoryItem], sides: [UUID: BuddySide], devices: [OwnDevice]) {
        let sharing = user.privateData.buddies.filter { buddy in
            buddy.sendingStatus == .accepted && buddy.buddyUserAnonymizedID != nil && (buddyID == nil || buddy.id == buddyID)
        }
        let ids = sharing.compactMap(\.buddyUserAnonymizedID)
        let me = user.privateData.userAnonymizedID
        let everyone = (withOwn ? [me] : []) + ids
        guard !everyone.isEmpty else { return ([], [], [:], []) }
        let (allGoals, allHistory) = try await goals.goalsWithHistory(ofAnonymizedUsers: everyone)
        let goalsByUser = Dictionary(grouping: allGoals) { $0.$userAnonymized.id }
        let historyByUser = Dictionary(grouping: allHistory) { $0.userAnonymizedID }
        let (devices, days) = withOwn ? try await users.devices(of: user, withFactsOf: ids) : ([], try await users.lastDays(ofAnonymizedUsers: ids))
        var sides: [UUID: BuddySide] = [:]
        for buddy in sharing {
            guard let id = buddy.buddyUserAnonymizedID else { continue }
            sides[buddy.id] = BuddySide(
                goals: goalsByUser[id] ?? [], history: (historyByUser[id] ?? []).map(\.item),
                appLastOpenedDate: days[id]?.opened, lastMonitoredActivityDate: days[id]?.monitored,
                vpnConnectedDevices: days[id]?.vpnConnected ?? [])
        }
        guard withOwn else { return ([], [], sides, []) }
        return (goalsByUser[me] ?? [], (historyByUser[me] ?? []).map(\.item), sides, devices)
    }
}
