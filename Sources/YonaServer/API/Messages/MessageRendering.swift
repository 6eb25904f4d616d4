import Foundation

extension UserRendering {
    /// Renders a message for its recipient; a goal conflict about the recipient is the "(me)" copy with the URL.
    func message(_ message: OpenedMessage, of user: UnlockedUser, topLevel: Bool) -> MessageDTO {
        let payload = message.payload
        let href = links.message(user.id, message.id)
        var halLinks = HALLinks(self: href, topLevel: topLevel)
        halLinks.add("edit", href)
        if let category = payload.activityCategoryID { halLinks.add("yona:activityCategory", links.activityCategory(category)) }
        halLinks.add(message.record.isRead ? "yona:markUnread" : "yona:markRead",
                     "\(href)/\(message.record.isRead ? "markUnread" : "markRead")")
        let aboutMe = payload.subjectUserAnonymizedID == user.privateData.userAnonymizedID
        return MessageDTO(
            type: payload.kind.rawValue, messageId: message.id,
            nickname: aboutMe ? "\(user.privateData.nickname) (me)" : user.privateData.nickname,
            creationTime: YonaDateFormat.timestamp(message.record.creationTime), isRead: message.record.isRead,
            url: payload.url, activityStartTime: payload.activityStartTime.map(YonaDateFormat.timestamp),
            activityEndTime: payload.activityEndTime.map(YonaDateFormat.timestamp), status: payload.status,
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
