import NIOConcurrencyHelpers
import NIOCore

/// Whether the client of the request being answered is still there: its connection's input ended
/// (the client closed it, or shut its sending side) or the connection closed. `VaultGate` stops the
/// request's work then, instead of computing an answer nobody reads.
///
/// One link per connection, watched from the head of its pipeline (`ClientGoneHandler`), before
/// NIO's HTTP handler, which holds a half-close back until the response is written. A connection
/// answers its requests one after another, so the link calls back only the request now running.
/// `WebGuard` makes the link `current` (a task local) for the request's task.
final class ClientLink: Sendable {
    @TaskLocal static var current: ClientLink?

    private let state = NIOLockedValueBox<(gone: Bool, callback: (@Sendable () -> Void)?)>((false, nil))

    var isGone: Bool { state.withLockedValue { $0.gone } }

    /// Calls `callback` when the client goes (at once if it has), in place of the previous request's.
    func onGone(_ callback: @escaping @Sendable () -> Void) {
        let goneAlready: Bool = state.withLockedValue { value in
            if value.gone { return true }
            value.callback = callback
            return false
        }
        if goneAlready { callback() }
    }

    func markGone() {
        let callback = state.withLockedValue { value -> (@Sendable () -> Void)? in
            guard !value.gone else { return nil }
            value.gone = true
            defer { value.callback = nil }
            return value.callback
        }
        callback?()
    }

    /// The connection's link, watched from the head of its pipeline: made and added on its first request.
    static func of(_ channel: any Channel) async -> ClientLink? {
        if let handler = try? await channel.pipeline.handler(type: ClientGoneHandler.self).get() { return handler.link }
        let handler = ClientGoneHandler()
        do {
            try await channel.pipeline.addHandler(handler, name: ClientGoneHandler.name, position: .first).get()
        } catch {
            return nil   // the channel is closing: nothing to watch
        }
        if !channel.isActive { handler.link.markGone() }
        return handler.link
    }
}

/// Passes every byte and event on; notes the end of the connection's input and its closing.
final class ClientGoneHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = ByteBuffer
    static let name = "hreader.client-gone"
    let link = ClientLink()

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { link.markGone() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        link.markGone()
        context.fireChannelInactive()
    }
}
