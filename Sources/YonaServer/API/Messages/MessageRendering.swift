import Foundation

extension UserRendering {
    /// Renders a message for its recipient: a goal conflict about the recipient is the "(me)" copy with the
    /// URL; a buddy's copy names the buddy by the nickname the recipient knows and hides the URL until disclosed.
    func message(_ message: OpenedMessage, of user: UnlockedUser, topLevel: Bool) -> MessageDTO {
        let payload = message.payload
        let href = links.message(user.id, message.id)
        var halLinks = HALLinks(self: href, topLevel: topLevel)
        halLinks.add("edit", href)
        if let category = payload.activityCategoryID { halLinks.add("yona:activityCategory", links.activityCategory(category)) }
        halLinks.add(message.record.isRead ? "yona:markUnread" : "yona:markRead",
                     "\(href)/\(message.record.isRead ? "markUnread" : "markRead")")
        let aboutMe = payload.subjectUserAnonymizedID == user.privateData.userAnonymizedID
        let buddy = user.privateData.buddies.first { $0.buddyUserAnonymizedID == payload.subjectUserAnonymizedID }
        let nickname: String
        if payload.kind == .systemMessage {
            nickname = "Yona"
        } else if let sender = payload.sender {
            nickname = buddy?.nickname ?? sender.nickname
        } else if aboutMe {
            nickname = payload.kind == .goalConflict ? "\(user.privateData.nickname) (me)" : user.privateData.nickname
        } else {
            nickname = buddy?.nickname ?? "Yona"
        }
        switch (payload.kind, payload.status) {
        case (.buddyConnectRequest, "REQUESTED"?), (.disclosureRequest, "DISCLOSURE_REQUESTED"?):
            halLinks.add("yona:accept", "\(href)/accept")
            halLinks.add("yona:reject", "\(href)/reject")
        case (.goalConflict, "ANNOUNCED"?) where !aboutMe:
            halLinks.add("yona:requestDisclosure", "\(href)/requestDisclosure")
        default:
            break
        }
        if let sender = payload.sender { halLinks.add("yona:user", links.user(sender.userID)) }
        return MessageDTO(
            type: payload.kind.rawValue, messageId: message.id, nickname: nickname,
            creationTime: YonaDateFormat.timestamp(message.record.creationTime), isRead: message.record.isRead,
            url: payload.url, urlIsExplicitNull: payload.kind == .goalConflict && !aboutMe,
            activityStartTime: payload.activityStartTime.map(YonaDateFormat.timestamp),
            activityEndTime: payload.activityEndTime.map(YonaDateFormat.timestamp), status: payload.status,
            message: payload.translations.map { $0[locale.rawValue] ?? $0[YonaLocale.fallback.rawValue] ?? "" } ?? payload.text, reason: payload.reason, change: payload.change, oldName: payload.oldName,
            newName: payload.newName, _links: halLinks)
    }

    func buddy(_ buddy: PrivateBuddy, of user: UnlockedUser, topLevel: Bool) -> BuddyDTO {
        let href = "\(links.buddies(user.id))\(buddy.id.uuidString.lowercased())"
        var halLinks = HALLinks(self: href, topLevel: topLevel)
        halLinks.add("edit", href)
        halLinks.add("yona:user", links.user(buddy.userID))
        return BuddyDTO(
            nickname: buddy.nickname, sendingStatus: buddy.sendingStatus.rawValue, receivingStatus: buddy.receivingStatus.rawValue,
            lastStatusChangeTime: YonaDateFormat.timestamp(buddy.lastStatusChangeTime),
            _embedded: .init(user: .init(firstName: buddy.firstName, lastName: buddy.lastName, mobileNumber: buddy.mobileNumber,
                                         nickname: buddy.nickname, _links: HALLinks(self: links.user(buddy.userID), topLevel: false))),
            _links: halLinks)
    }

    func messagePage(_ page: MessageService.Page, of user: UnlockedUser, onlyUnread: Bool) -> MessagePageDTO {
        func pageHref(_ number: Int) -> String {
            "\(links.messages(user.id))?page=\(number)&size=\(page.size)" + (onlyUnread ? "&onlyUnreadMessages=true" : "")
        }
        var halLinks = HALLinks(self: pageHref(page.number))
        if page.totalPages > 0 {
            halLinks.add("first", pageHref(0))
            if page.number > 0 { halLinks.add("prev", pageHref(min(page.number - 1, page.totalPages - 1))) }
            if page.number + 1 < page.totalPages { halLinks.add("next", pageHref(page.number + 1)) }
            halLinks.add("last", pageHref(page.totalPages - 1))
        }
        let items = page.messages.map { message($0, of: user, topLevel: false) }
        return MessagePageDTO(
            _embedded: items.isEmpty ? nil : ["yona:messages": items],
            page: .init(size: page.size, totalElements: page.totalElements, totalPages: page.totalPages, number: page.number),
            _links: halLinks)
    }
}
