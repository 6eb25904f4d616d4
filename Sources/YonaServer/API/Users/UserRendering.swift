import Foundation

/// Builds the own-user HAL document the apps expect.
struct UserRendering {
    let links: LinkBuilder

    func ownUser(_ user: UnlockedUser, devices: [OwnDevice], password: String?, requestingDeviceID: UUID?) -> OwnUserDTO {
        var halLinks = HALLinks(self: links.user(user.id, requestingUserID: user.id, requestingDeviceID: requestingDeviceID))
        halLinks.add("edit", links.user(user.id))
        var embedded: OwnUserDTO.Embedded?
        if user.isConfirmed {
            halLinks.add("yona:messages", links.messages(user.id))
            halLinks.add("yona:newDeviceRequest", links.newDeviceRequest(user.mobileNumber))
            let deviceItems = devices.map { ownDevice($0, of: user, requestingDeviceID: requestingDeviceID, topLevel: false) }
            embedded = .init(
                devices: HALCollection(rel: "yona:devices", items: deviceItems, links: HALLinks(self: links.devices(user.id), topLevel: false)),
                goals: HALCollection(rel: "yona:goals", items: [], links: HALLinks(self: links.goals(user.id), topLevel: false)),
                buddies: HALCollection(rel: "yona:buddies", items: [], links: HALLinks(self: links.buddies(user.id), topLevel: false)))
        } else {
            halLinks.add("yona:confirmMobileNumber", links.confirmMobileNumber(user.id))
            halLinks.add("yona:resendMobileNumberConfirmationCode", links.resendConfirmationCode(user.id))
        }
        return OwnUserDTO(
            creationTime: YonaDateFormat.timestamp(user.privateData.creationTime),
            appLastOpenedDate: devices.compactMap(\.appLastOpenedDate).max(),
            firstName: user.privateData.firstName, lastName: user.privateData.lastName,
            nickname: user.privateData.nickname, mobileNumber: user.mobileNumber,
            yonaPassword: password, _embedded: embedded, _links: halLinks)
    }

    func ownDevice(_ device: OwnDevice, of user: UnlockedUser, requestingDeviceID: UUID?, topLevel: Bool) -> OwnDeviceDTO {
        var halLinks = HALLinks(self: links.device(user.id, device.device.id), topLevel: topLevel)
        halLinks.add("edit", links.device(user.id, device.device.id))
        halLinks.add("yona:postOpenAppEvent", links.device(user.id, device.device.id) + "/openApp")
        return OwnDeviceDTO(
            name: device.device.name, operatingSystem: device.operatingSystem.rawValue,
            registrationTime: YonaDateFormat.timestamp(device.device.registrationTime),
            appLastOpenedDate: device.appLastOpenedDate,
            requestingDevice: device.device.id == requestingDeviceID,
            firebaseInstanceId: device.firebaseInstanceID,
            vpnProfile: .init(vpnLoginID: "\(user.privateData.userAnonymizedID.uuidString.lowercased())$\(device.deviceIndex)"),
            _links: halLinks)
    }
}
