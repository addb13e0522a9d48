using Courier.Actors.Server;
using Courier.Protocols.Mqtt;

namespace Courier.Actors.Connections;

/// <summary>
/// The account an MQTT client logs into, as nats-server's MQTT: a user of <c>authorization</c>,
/// <c>accounts</c> or an operator's JWTs (the JWT sent as the password) lands in that user's account,
/// its permissions applied to topics as to subjects; its sessions and retained messages are that
/// account's (<see cref="Mqtt.MqttAccountScope"/>).
/// </summary>
internal sealed partial class MqttConnection
{
    /// <summary>1 while this client counts toward its operator-mode account's connection limit.</summary>
    private int _accountAdmitted;

    /// <summary>The user name and password of the accepted CONNECT: a config reload checks them again.</summary>
    private (string? User, string? Password)? _credentials;

    // Binds the connection to the user's account, with its permissions; null when admitted, else the close.
    private async Task<MqttStep?> EnterAccountAsync(AuthResult auth, (string? User, string? Password) credentials)
    {
        if (auth.AccountKey is { } accountKey)
        {
            if (!_context.Authentication.TryAdmitToAccount(accountKey))
            {
                // The account JWT's limits.conn reached (nats-server's "maximum account active connections exceeded").
                RefuseConnect(MqttConnectReturnCode.ServerUnavailable, MqttReasonCode.QuotaExceeded);
                return MqttFatal("maximum account active connections exceeded", "Maximum Account Connections Exceeded");
            }

            JwtAccount = accountKey;
            Volatile.Write(ref _accountAdmitted, 1);
            if (IsClosed)
            {
                ReleaseAccountAdmission(); // closed meanwhile: its shutdown may have looked before the admission
            }
        }

        AuthorizedUser = auth.User;
        AuthExpires = auth.Expires; // a user JWT's exp: the connection actor closes the client then
        SetPermissions(auth.Permissions is null ? null : new ClientPermissions(auth.Permissions));
        _credentials = (credentials.User, credentials.Password);
        var account = auth.Account ?? _context.Node.Accounts.Global;
        BindAccount(account);
        if (auth.Account is { } bound)
        {
            await _context.ActivateAccount(bound).ConfigureAwait(false);
        }

        if (!account.IsGlobal && account.JetStream is null)
        {
            // nats-server keeps an account's MQTT sessions in the account's JetStream and refuses a client of an
            // account without it; Courier does the same, so a configuration behaves alike on both servers.
            RefuseConnect(MqttConnectReturnCode.ServerUnavailable, MqttReasonCode.ServerUnavailable);
            return MqttFatal($"unable to connect: lookup sessions stream for account \"{account.Name}\": JetStream not enabled for account (10039)", "Server Unavailable");
        }

        return null;
    }

    /// <summary>
    /// Re-checks the client's CONNECT credentials against the reloaded authorization, as nats-server's
    /// reloadAuthorization does for every client, MQTT ones included: a client no longer authorized, or
    /// whose user moved to another account, is closed (an MQTT 5.0 one with DISCONNECT 0x87); the others
    /// get their user's new permissions.
    /// </summary>
    public void ReapplyAuthorization()
    {
        if (IsClosed || !_mqtt.Connected || _credentials is not { } credentials)
        {
            return;
        }

        var auth = _context.Authentication.AuthenticateMqtt(credentials.User, credentials.Password, ClientCertificate, RemoteIp, IsWebSocket);
        if (!auth.Succeeded || !ReferenceEquals(auth.Account ?? _context.Node.Accounts.Global, Account))
        {
            WriteServerDisconnect(MqttReasonCode.NotAuthorized);
            RequestClose("Authentication Failure");
            return;
        }

        AuthorizedUser = auth.User;
        SetPermissions(auth.Permissions is null ? null : new ClientPermissions(auth.Permissions));
    }

    /// <summary>
    /// An MQTT client gets no NATS <c>-ERR</c> line: the errors sent to any client (a revoked or no longer
    /// valid user JWT) close it for its authorization, which a 5.0 client learns from DISCONNECT 0x87.
    /// </summary>
    public override void SendError(string text) => WriteServerDisconnect(MqttReasonCode.NotAuthorized);

    /// <summary>Releases the client's place in its account's connection count, once, whoever calls first.</summary>
    private void ReleaseAccountAdmission()
    {
        if (JwtAccount is { } account && Interlocked.Exchange(ref _accountAdmitted, 0) == 1)
        {
            _context.Authentication.ReleaseFromAccount(account);
        }
    }
}
