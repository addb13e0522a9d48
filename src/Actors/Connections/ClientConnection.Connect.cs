using System.Text;
using Akka.Actor;
using Courier.Protocols.Nats;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Connections;

/// <summary>A NATS client's CONNECT: authentication, its account and permissions, its options; and a reload's re-check.</summary>
internal sealed partial class ClientConnection
{
    /// <summary>1 while this client counts toward its operator-mode account's connection limit.</summary>
    private int _accountAdmitted;

    // CONNECT <json>\r\n
    private ReadOutcome ProcessConnect(ReadOnlySpan<byte> json)
    {
        if (!TryReadJson(json, NatsJsonContext.Default.ConnectOptions, out var options))
        {
            // nats-server: the CONNECT cannot be decoded -> closed without an error line.
            return Fatal(null, "Protocol Violation");
        }

        if (Transport.WebSocketUpgrade is { CookieJwt: { Length: > 0 } cookieJwt } && string.IsNullOrEmpty(options.Jwt) && _context.Trust is not null)
        {
            // websocket.jwt_cookie: a CONNECT without a JWT uses the cookie's (nats-server's processConnect).
            options.Jwt = cookieJwt;
        }

        if (!_connectReceived)
        {
            var auth = _context.Authentication.Authenticate(options, ClientCertificate, IsWebSocket, NonceBytes(), RemoteIp);
            if (!auth.Succeeded)
            {
                LogAuthenticationFailure(options, auth.Failure);
                return Fatal(NatsErrors.AuthorizationViolation, "Authentication Failure");
            }

            if (auth.AccountKey is { } accountKey)
            {
                if (!_context.Authentication.TryAdmitToAccount(accountKey))
                {
                    LogProtocolError(NatsErrors.MaxAccountConnectionsExceeded);
                    return Fatal(NatsErrors.MaxAccountConnectionsExceeded, "Maximum Account Connections Exceeded");
                }

                JwtAccount = accountKey;
                Volatile.Write(ref _accountAdmitted, 1);
                if (IsClosed)
                {
                    ReleaseAccountAdmission(); // closed meanwhile: its shutdown may have looked before the admission
                }
            }

            AuthorizedUser = auth.User;
            AuthExpires = auth.Expires;
            var rtt = DateTime.UtcNow - Started;
            Rtt = rtt > TimeSpan.Zero ? rtt : TimeSpan.FromMicroseconds(1); // as nats-server's computeRTT
            SetPermissions(auth.Permissions is null ? null : new ClientPermissions(auth.Permissions));
            BindAccount(auth.Account ?? _node.Accounts.Global);
            if (auth.Account is { } bound && _context.ActivateAccount(bound) is { IsCompleted: false } activation)
            {
                _activation = activation; // awaited before the next command (see FlushSubscriptionChangesAsync)
            }
        }

        if (options.Protocol is < 0 or > 1)
        {
            return Fatal(NatsErrors.BadClientProtocol, "Bad Client Protocol Version");
        }

        if (options.NoResponders && !options.Headers)
        {
            return Fatal(NatsErrors.NoRespondersRequiresHeaders, "No Responders Requires Headers");
        }

        ConnectOptions = options;
        _headers = options.Headers;
        _noResponders = options.NoResponders;
        Publisher.Echo = options.Echo;
        _verbose = options.Verbose;
        _pedantic = options.Pedantic;
        if (!_connectReceived)
        {
            _connectReceived = true;
            Owner.Tell(ConnectionActor.Protocol.Connected.Instance);
            _context.Events?.ClientConnected(this); // once per connection: the system account's CONNECT event
        }

        if (_verbose)
        {
            WriteOwn(ProtocolWriter.Ok);
        }

        if (_log.IsEnabled(LogLevel.Trace))
        {
            Log.TraceIn(_log, Id, ClientOp.Connect);
        }

        return _activation is null ? ReadOutcome.Continue : ReadOutcome.Wait;
    }

    /// <summary>
    /// After a reload: the new max_payload and max_control_line hold for this client's next command, as
    /// nats-server stores them into each client (plain int writes; the read loop sees them on a later read).
    /// </summary>
    public void ApplyLimits(int maxPayload, int maxControlLine)
    {
        _parser.MaxPayload = maxPayload;
        _parser.MaxControlLine = maxControlLine;
    }

    /// <summary>
    /// Re-checks the client's CONNECT against the reloaded authorization, as nats-server's
    /// reloadAuthorization: a client no longer authorized gets <c>-ERR 'Authorization Violation'</c>
    /// and is closed; the others get their user's new permissions. Clients that have not sent CONNECT
    /// yet are left alone (they are checked at CONNECT).
    /// </summary>
    public void ReapplyAuthorization()
    {
        if (IsClosed || ConnectOptions is not { } connect)
        {
            return;
        }

        var auth = _context.Authentication.Authenticate(connect, ClientCertificate, IsWebSocket, NonceBytes(), RemoteIp);
        if (!auth.Succeeded)
        {
            SendError(NatsErrors.AuthorizationViolation);
            RequestClose("Authentication Failure");
            return;
        }

        if (!ReferenceEquals(auth.Account ?? _node.Accounts.Global, Account))
        {
            // The user moved to another account: its subscriptions are in the old one's space.
            SendError(NatsErrors.AuthorizationViolation);
            RequestClose("Authentication Failure");
            return;
        }

        AuthorizedUser = auth.User;
        SetPermissions(auth.Permissions is null ? null : new ClientPermissions(auth.Permissions));
    }

    /// <summary>Releases the client's place in its account's connection count, once, whoever calls first (read pump or shutdown).</summary>
    private void ReleaseAccountAdmission()
    {
        if (JwtAccount is { } account && Interlocked.Exchange(ref _accountAdmitted, 0) == 1)
        {
            _context.Authentication.ReleaseFromAccount(account);
        }
    }

    /// <summary>The INFO nonce as the bytes the client signed (its ASCII characters); null without one.</summary>
    private byte[]? NonceBytes() => Nonce is null ? null : Encoding.ASCII.GetBytes(Nonce);

    /// <summary>
    /// As nats-server's authViolation: an error line naming the nkey or user the client claimed (never
    /// a password, a seed or a JWT), and at debug level why the check failed.
    /// </summary>
    private void LogAuthenticationFailure(ConnectOptions options, string? failure)
    {
        if (failure is not null && _log.IsEnabled(LogLevel.Debug))
        {
            Log.AuthenticationFailureReason(_log, Id, failure);
        }

        Log.AuthenticationError(_log, Id, _context.Authentication.ErrorText(options));
    }

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Error, Message = "cid:{Cid} - {Text}")]
        public static partial void AuthenticationError(ILogger logger, ulong cid, string text);

        [LoggerMessage(Level = LogLevel.Debug, Message = "cid:{Cid} - {Reason}")]
        public static partial void AuthenticationFailureReason(ILogger logger, ulong cid, string reason);
    }
}
