using System.Text;
using Courier.Protocols.Nats;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Connections;

/// <summary>NKey and JWT users: the nonce a client signs, and the log lines of a refused CONNECT.</summary>
internal sealed partial class ClientConnection
{
    /// <summary>1 while this client counts toward its operator-mode account's connection limit.</summary>
    private int _accountAdmitted;

    /// <summary>Releases the client's place in its account's connection count, once, whoever calls first (read pump or shutdown).</summary>
    private void ReleaseAccountAdmission()
    {
        if (JwtAccount is { } account && Interlocked.Exchange(ref _accountAdmitted, 0) == 1)
        {
            _broker.Authentication.ReleaseFromAccount(account);
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

        Log.AuthenticationError(_log, Id, _broker.Authentication.ErrorText(options));
    }

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Error, Message = "cid:{Cid} - {Text}")]
        public static partial void AuthenticationError(ILogger logger, ulong cid, string text);

        [LoggerMessage(Level = LogLevel.Debug, Message = "cid:{Cid} - {Reason}")]
        public static partial void AuthenticationFailureReason(ILogger logger, ulong cid, string reason);
    }
}
