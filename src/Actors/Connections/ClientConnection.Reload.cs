namespace Courier.Actors.Connections;

/// <summary>A config reload's effect on a connected client.</summary>
internal sealed partial class ClientConnection
{
    /// <summary>
    /// Re-checks the client's CONNECT against the reloaded authorization, as nats-server's
    /// reloadAuthorization: a client no longer authorized gets <c>-ERR 'Authorization Violation'</c>
    /// and is closed; the others get their user's new permissions. MQTT, internal clients and
    /// clients that have not sent CONNECT yet are left alone (the latter are checked at CONNECT).
    /// </summary>
    public void ReapplyAuthorization()
    {
        if (IsClosed || IsInternal || IsMqtt || ConnectOptions is not { } connect)
        {
            return;
        }

        var auth = _broker.Authentication.Authenticate(connect, ClientCertificate, IsWebSocket, NonceBytes(), RemoteIp);
        if (!auth.Succeeded)
        {
            SendError(Protocols.Nats.NatsErrors.AuthorizationViolation);
            RequestClose("Authentication Failure");
            return;
        }

        if (!ReferenceEquals(auth.Account ?? _broker.Accounts.Global, _account))
        {
            // The user moved to another account: its subscriptions are in the old one's space.
            SendError(Protocols.Nats.NatsErrors.AuthorizationViolation);
            RequestClose("Authentication Failure");
            return;
        }

        AuthorizedUser = auth.User;
        var permissions = auth.Permissions is null ? null : new ClientPermissions(auth.Permissions);
        _permissions = permissions;
        DeliveryFilter = permissions is { FiltersDeliveries: true } ? permissions : null;
    }
}
