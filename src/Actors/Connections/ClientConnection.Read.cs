using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using System.Text.Json;
using Akka.Actor;
using Courier.Actors.Hosting;
using Courier.Protocols.Nats;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Connections;

internal sealed partial class ClientConnection
{
    private bool _connectReceived;
    private bool _headers;
    private bool _noResponders;

    // The MQTT sessions' capture client (InProcessRole.MqttCapture): an MQTT publisher that reaches it defers its PUBACKs.
    private bool _isMqttCapture;
    private bool _echo = true;
    // nats-server's options before CONNECT: verbose and pedantic until the client says otherwise.
    private bool _verbose = true;
    private bool _pedantic = true;
    private int _pingsOut;
    private int _idlePollCensus = -1; // the idle poll's census this connection was last counted in
    private ClientPermissions? _permissions;

    /// <summary>Set when subscribe permissions deny subjects: publishers check each delivery against it.</summary>
    public ClientPermissions? DeliveryFilter { get; private set; }

    internal enum ReadOutcome
    {
        /// <summary>Everything complete was processed; read more.</summary>
        Continue,

        /// <summary>Stopped before a PUB: pending SUB/UNSUB must be in effect first (invariant 2).</summary>
        FlushSubscriptions,

        /// <summary>The connection must close (the reason is recorded).</summary>
        Close,
    }

    private async Task RunReadPumpAsync()
    {
        var buffers = new ReadBufferPool();
        var reader = PipeReader.Create(_stream, buffers.ReaderOptions());
        var closeReason = "Client Closed";
        try
        {
            while (true)
            {
                var result = await reader.ReadAsync().ConfigureAwait(false);
                var buffer = result.Buffer;
                buffers.Observe(buffer.Length);
                var outcome = ReadOutcome.Continue;
                try
                {
                    while (true)
                    {
                        outcome = Process(ref buffer);
                        if (outcome != ReadOutcome.FlushSubscriptions)
                        {
                            break;
                        }

                        await FlushSubscriptionChangesAsync().ConfigureAwait(false);
                    }

                    if (_pendingChanges.Count > 0)
                    {
                        await FlushSubscriptionChangesAsync().ConfigureAwait(false);
                    }

                    if (FlushTouched())
                    {
                        IdlePoll.Touch(ref _idlePollCensus); // a small batch: the next one is likely a reply away, worth a cheap wake-up
                    }
                }
                finally
                {
                    reader.AdvanceTo(buffer.Start, buffer.End);
                }

                if (_stalledOn.Count > 0)
                {
                    await WaitForStalledConsumersAsync().ConfigureAwait(false);
                }

                if (outcome == ReadOutcome.Close)
                {
                    closeReason = _closeRequest ?? "Protocol Error";
                    break;
                }

                if (result.IsCompleted || IsClosed)
                {
                    break;
                }
            }
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException or OperationCanceledException)
        {
            closeReason = "Read Error";
        }
        finally
        {
            await reader.CompleteAsync().ConfigureAwait(false);
        }

        RequestClose(closeReason);
    }

    private string? _closeRequest;

    /// <summary>Processes every complete command in <paramref name="buffer"/>, slicing off what it consumed.</summary>
    internal ReadOutcome Process(ref ReadOnlySequence<byte> buffer)
    {
        if (_route is not null)
        {
            return ProcessRoute(ref buffer);
        }

        var reader = new SequenceReader<byte>(buffer);
        var command = default(ClientCommand);
        var outcome = ReadOutcome.Continue;
        while (true)
        {
            var before = reader.Consumed;
            var status = _parser.TryRead(ref reader, ref command, out var error);
            if (status == ParseStatus.NeedMoreData)
            {
                break;
            }

            if (status == ParseStatus.Error)
            {
                outcome = ProtocolViolation(error);
                break;
            }

            if (!_connectReceived && command.Op != ClientOp.Connect && _broker.Authentication.AuthRequired)
            {
                outcome = Fatal(NatsErrors.AuthorizationViolation, "Authentication Failure");
                break;
            }

            switch (command.Op)
            {
                case ClientOp.Pub:
                case ClientOp.HPub:
                    if (_pendingChanges.Count > 0)
                    {
                        reader.Rewind(reader.Consumed - before);
                        outcome = ReadOutcome.FlushSubscriptions;
                        break;
                    }

                    if (command.Op == ClientOp.HPub && !_headers)
                    {
                        // nats-server: headers not supported by this client -> closed without an error.
                        outcome = Fatal(null, "Headers Not Supported");
                        break;
                    }

                    ProcessClientPublish(command);
                    break;
                case ClientOp.Sub:
                    ProcessSubscribe(command.Subject, command.Queue, command.Sid);
                    break;
                case ClientOp.Unsub:
                    ProcessUnsubscribe(command.Sid, command.Max);
                    break;
                case ClientOp.Ping:
                    WriteOwn(ProtocolWriter.Pong);
                    break;
                case ClientOp.Pong:
                    Volatile.Write(ref _pingsOut, 0);
                    break;
                case ClientOp.Connect:
                    outcome = ProcessConnect(command.Arguments);
                    break;
                case ClientOp.Err:
                    // nats-server closes a client that sends -ERR, without a reply.
                    outcome = Fatal(null, "Client Error");
                    break;
                default:
                    // INFO and +OK from a client are ignored.
                    break;
            }

            if (outcome != ReadOutcome.Continue)
            {
                break;
            }
        }

        Volatile.Write(ref _lastActivityTick, Environment.TickCount64);
        buffer = buffer.Slice(reader.Position);
        return outcome;
    }

    private ReadOutcome ProtocolViolation(ParseError error)
    {
        if (error == ParseError.InvalidArguments)
        {
            return Fatal(null, "Protocol Violation");
        }

        var text = NatsErrors.ToText(error);
        Log.ProtocolError(_log, Id, text);
        return Fatal(text, error == ParseError.MaxPayloadViolation ? "Maximum Payload Exceeded" : "Protocol Violation");
    }

    /// <summary>Queues the -ERR (if any) for the client and ends processing; the pump then closes.</summary>
    private ReadOutcome Fatal(string? errorText, string reason)
    {
        if (errorText is not null)
        {
            WriteOwn(ProtocolWriter.Error(errorText));
        }

        _closeRequest = reason;
        return ReadOutcome.Close;
    }

    // CONNECT <json>\r\n
    private ReadOutcome ProcessConnect(ReadOnlySpan<byte> json)
    {
        ConnectOptions options;
        try
        {
            options = JsonSerializer.Deserialize(json, NatsJsonContext.Default.ConnectOptions) ?? new ConnectOptions();
        }
        catch (JsonException)
        {
            // nats-server: the CONNECT cannot be decoded -> closed without an error line.
            return Fatal(null, "Protocol Violation");
        }

        if (_stream is WebSocketStream { Upgrade.CookieJwt: { Length: > 0 } cookieJwt } && string.IsNullOrEmpty(options.Jwt) && _broker.Trust is not null)
        {
            // websocket.jwt_cookie: a CONNECT without a JWT uses the cookie's (nats-server's processConnect).
            options.Jwt = cookieJwt;
        }

        if (!_connectReceived)
        {
            var auth = _broker.Authentication.Authenticate(options, ClientCertificate, IsWebSocket, NonceBytes(), RemoteIp);
            if (!auth.Succeeded)
            {
                LogAuthenticationFailure(options, auth.Failure);
                return Fatal(NatsErrors.AuthorizationViolation, "Authentication Failure");
            }

            if (auth.AccountKey is { } accountKey)
            {
                if (!_broker.Authentication.TryAdmitToAccount(accountKey))
                {
                    Log.ProtocolError(_log, Id, NatsErrors.MaxAccountConnectionsExceeded);
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
            _permissions = auth.Permissions is null ? null : new ClientPermissions(auth.Permissions);
            DeliveryFilter = _permissions is { FiltersDeliveries: true } ? _permissions : null;
            BindAccount(auth.Account ?? _broker.Accounts.Global);
            if (auth.Account is { } bound && _broker.ActivateAccountAsync(bound) is { IsCompleted: false } activation)
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
        _echo = options.Echo;
        _verbose = options.Verbose;
        _pedantic = options.Pedantic;
        if (!_connectReceived)
        {
            _connectReceived = true;
            _owner.Tell(ConnectionActor.Protocol.Connected.Instance);
            _broker.Events?.ClientConnected(this); // once per connection: the system account's CONNECT event
        }

        if (_verbose)
        {
            WriteOwn(ProtocolWriter.Ok);
        }

        if (_log.IsEnabled(LogLevel.Trace))
        {
            Log.TraceIn(_log, Id, ClientOp.Connect);
        }

        return _activation is null ? ReadOutcome.Continue : ReadOutcome.FlushSubscriptions;
    }

    /// <summary>Queues a frame for this client itself; flushed with the read batch.</summary>
    private void WriteOwn(ReadOnlySpan<byte> frame)
    {
        Outbound.Write(frame);
        Touch(Outbound);
    }
}
