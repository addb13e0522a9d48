using System.Buffers;
using System.Net.Sockets;
using System.Text;
using Akka.Actor;
using Courier.Actors.Routing;
using Courier.Actors.Server.Authentication;
using Courier.Protocols.Nats;
using Courier.Protocols.Subjects;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Connections;

/// <summary>
/// A NATS client: INFO, then CONNECT, PUB/HPUB, SUB/UNSUB, PING/PONG from the client and MSG/HMSG to it,
/// over TCP, TLS (the client listener's <c>tls {}</c>) or WebSocket (the transport says which). Its
/// <see cref="ConnectionActor"/> owns its lifetime.
/// </summary>
internal sealed partial class ClientConnection : Connection
{
    private static readonly byte[] NoRespondersPayload = ProtocolWriter.NoRespondersHeader.ToArray();

    private const int InfoSize = 2048; // bytes: the INFO line is a few hundred

    private readonly ClientContext _context;
    private readonly NatsParser _parser;
    private bool _connectReceived;
    private bool _headers;
    private bool _noResponders;

    // nats-server's options before CONNECT: verbose and pedantic until the client says otherwise.
    private bool _verbose = true;
    private bool _pedantic = true;
    private byte[]? _noRespondersLine; // allocated at the first no-responders answer

    public ClientConnection(ClientContext context, Stream stream, Socket? socket, ulong id, IActorRef owner)
        : base(context.Node, new Transport(stream, socket), id, owner, PublisherKind.Client)
    {
        _context = context;
        var options = context.Node.Options;
        _parser = new NatsParser(options.MaxControlLine, options.MaxPayload);
    }

    /// <inheritdoc />
    public override ConnectionKind Kind => ConnectionKind.Client;

    /// <summary>The nonce of this client's INFO (raw URL-safe base64), when nkey users or operator mode need one.</summary>
    public string? Nonce { get; private set; }

    /// <summary>Sends INFO (after the TLS handshake when it comes first) and starts the read and write pumps.</summary>
    public override void Start()
    {
        if (_context.Authentication.NonceRequired)
        {
            // nkey users or operator mode: the client signs this nonce of its INFO.
            Nonce = Authenticator.NewNonce();
        }

        if (Transport.Socket is not null && !IsWebSocket && _context.Tls is { } tls)
        {
            // The client listener's tls {} block: WebSocket clients have their own listener and block.
            _readPump = Task.Run(() => SecureAndRunAsync(tls));
            return;
        }

        // INFO is formatted in place: no per-connection JSON serialization or garbage.
        Span<byte> info = stackalloc byte[InfoSize];
        var length = _context.Info.Format(info, Id, RemoteIp, IsWebSocket, Nonce);
        if (length > 0)
        {
            Outbound.Write(info[..length]);
        }
        else
        {
            Outbound.Write(ProtocolWriter.Info(_context.Info.Create(this)));
        }

        Outbound.Signal();

        // Both pumps start on this thread rather than through the thread pool: the write pump sends the
        // INFO at once (a non-blocking socket send) and the read pump runs to its first pending read, so
        // a connection costs no thread-pool hand-over before the client sees INFO (a connection storm
        // opens thousands a second). Everything after their first await runs where the socket completes.
        _writePump = RunWritePumpAsync();
        _readPump = RunReadPumpAsync();
    }

    /// <summary>
    /// A TLS client connection, as nats-server's createClient: INFO in the clear (<c>tls_required</c>), then
    /// the client's ClientHello and the server handshake, then the pumps over the encrypted stream. With
    /// <c>handshake_first</c> the handshake comes first and INFO is the first encrypted frame.
    /// </summary>
    /// <remarks>
    /// Runs on the thread pool as the connection's read pump; the handshake's own timeout bounds it. A
    /// failed handshake closes this connection only, with nats-server's log line.
    /// </remarks>
    private async Task SecureAndRunAsync(TlsTransport tls)
    {
        if (!tls.Options.HandshakeFirst)
        {
            try
            {
                await Transport.Stream.WriteAsync(FormatInfo(webSocket: false)).ConfigureAwait(false);
            }
            catch (Exception e) when (Transport.IsHandshakeFailure(e))
            {
                RequestClose("TLS Handshake Error");
                return;
            }
        }

        if (!await TrySecureAsync(tls, "cid", "TLS handshake error").ConfigureAwait(false))
        {
            return;
        }

        if (tls.Options.HandshakeFirst)
        {
            Outbound.Write(FormatInfo(webSocket: false));
        }

        Outbound.Signal();
        _writePump = Task.Run(RunWritePumpAsync);
        await RunReadPumpAsync().ConfigureAwait(false);
    }

    /// <summary>The INFO line for a TLS client, as an array (it is written to the stream before the pumps start).</summary>
    private byte[] FormatInfo(bool webSocket)
    {
        Span<byte> info = stackalloc byte[InfoSize];
        var length = _context.Info.Format(info, Id, RemoteIp, webSocket, Nonce);
        return length > 0 ? info[..length].ToArray() : ProtocolWriter.Info(_context.Info.Create(this));
    }

    /// <inheritdoc />
    internal override ReadOutcome Process(ref ReadOnlySequence<byte> buffer)
    {
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

            if (!_connectReceived && command.Op != ClientOp.Connect && _context.Authentication.AuthRequired)
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
                        outcome = ReadOutcome.Wait; // pending SUB/UNSUB in effect first (invariant 2)
                        break;
                    }

                    if (command.Op == ClientOp.HPub && !_headers)
                    {
                        // nats-server: headers not supported by this client -> closed without an error.
                        outcome = Fatal(null, "Headers Not Supported");
                        break;
                    }

                    ProcessPublish(command);
                    break;
                case ClientOp.Sub:
                    ProcessSubscribe(command.Subject, command.Queue, command.Sid);
                    break;
                case ClientOp.Unsub:
                    RemoveSubscription(Encoding.UTF8.GetString(command.Sid), command.Max);
                    if (_verbose)
                    {
                        WriteOwn(ProtocolWriter.Ok);
                    }

                    break;
                case ClientOp.Ping:
                    WriteOwn(ProtocolWriter.Pong);
                    break;
                case ClientOp.Pong:
                    ReceivedPong();
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

        MarkActivity();
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
        LogProtocolError(text);
        return Fatal(text, error == ParseError.MaxPayloadViolation ? "Maximum Payload Exceeded" : "Protocol Violation");
    }

    /// <summary>
    /// PUB or HPUB: permissions, the subject check (pedantic), +OK (verbose), then the pipeline. The
    /// payload's slice of the read buffer is taken only once someone is to receive it (a publish
    /// nobody receives costs no slicing). No one to receive a request: the no-responders status.
    /// </summary>
    private void ProcessPublish(scoped in ClientCommand command)
    {
        var publisher = Publisher;
        publisher.Count((int)command.PayloadLength);
        var subject = command.Subject;
        if (Permissions is { } permissions && !permissions.CanPublish(subject))
        {
            WriteOwn(ProtocolWriter.Error(NatsErrors.PublishViolation(Encoding.UTF8.GetString(subject))));
            return;
        }

        if (_pedantic && !SubjectRules.IsValidLiteralSubject(subject))
        {
            WriteOwn(ProtocolWriter.Error(NatsErrors.InvalidPublishSubject));
        }

        if (_verbose)
        {
            WriteOwn(ProtocolWriter.Ok);
        }

        bool delivered;
        if (publisher.IsGatewayReply(subject))
        {
            delivered = publisher.SendMappedReply(subject, command.ReplyTo, command.HeaderSize, command.Payload);
        }
        else
        {
            var match = publisher.Match(subject);
            delivered = !match.IsEmpty && publisher.Deliver(match, subject, subject, command.ReplyTo, command.HeaderSize, command.Payload, default);
        }

        if (!delivered && _noResponders && !command.ReplyTo.IsEmpty)
        {
            SendNoResponders(command.ReplyTo);
        }
    }

    // HMSG <reply> <sid> 16 16\r\nNATS/1.0 503\r\n\r\n\r\n to this client's own subscription on the reply subject.
    private void SendNoResponders(ReadOnlySpan<byte> replyTo)
    {
        var match = Publisher.Account.Space.Match(replyTo);
        foreach (var sub in match.Plain)
        {
            if (!ReferenceEquals(sub.Client, this))
            {
                continue;
            }

            var header = ProtocolWriter.NoRespondersHeader;
            var line = _noRespondersLine is { } existing && existing.Length >= replyTo.Length + 64 ? existing : _noRespondersLine = new byte[(replyTo.Length + 64) * 2];
            if (ProtocolWriter.TryFormatMsgTemplate(line, replyTo, default, header.Length, header.Length, out var prefixLength, out var suffixLength))
            {
                Outbound.WriteMsg(
                    new ReadOnlySpan<byte>(line, 0, prefixLength),
                    sub.Sid,
                    new ReadOnlySpan<byte>(line, prefixLength, suffixLength),
                    new ReadOnlySequence<byte>(NoRespondersPayload));
                Publisher.Touch(Outbound);
            }

            return;
        }
    }

    // SUB <subject> [queue group] <sid>\r\n
    private void ProcessSubscribe(ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> queueBytes, ReadOnlySpan<byte> sidBytes)
    {
        if (!SubjectRules.IsValidSubject(subjectBytes) || (!queueBytes.IsEmpty && !IsValidQueue(queueBytes)))
        {
            WriteOwn(ProtocolWriter.Error(NatsErrors.InvalidSubject));
            return;
        }

        var subject = Encoding.UTF8.GetString(subjectBytes);
        var queue = queueBytes.IsEmpty ? null : Encoding.UTF8.GetString(queueBytes);
        if (Permissions is { } permissions && !permissions.CanSubscribe(subject))
        {
            WriteOwn(ProtocolWriter.Error(NatsErrors.SubscribeViolation(subject, queue)));
            return;
        }

        var account = Account;
        var sub = new Subscription(this, account, subject, queue, sidBytes.ToArray(), account.Space.ShardForSubscription(subjectBytes));
        if (!TryAddSubscription(sub))
        {
            WriteOwn(ProtocolWriter.Error(NatsErrors.MaxSubscriptionsExceeded));
            return;
        }

        if (_verbose)
        {
            WriteOwn(ProtocolWriter.Ok);
        }
    }

    /// <summary>MSG or HMSG from the publish's shared template; a client that did not ask for headers gets a plain MSG without the header block, as nats-server.</summary>
    internal override bool WriteMessage(Subscription sub, ref MsgTemplates templates, in ReadOnlySequence<byte> payload, Publisher from)
    {
        if (templates.HeaderSize > 0 && !_headers)
        {
            templates.FormatPlain();
            return Outbound.WriteMsg(templates.PlainPrefix, sub.Sid, templates.PlainSuffix, payload.Slice(templates.HeaderSize));
        }

        return Outbound.WriteMsg(templates.Prefix, sub.Sid, templates.Suffix, payload);
    }

    /// <inheritdoc />
    private protected override void OnClosed()
    {
        ReleaseAccountAdmission();
        if (ConnectOptions is not null)
        {
            _context.Events?.ClientClosed(this); // the system account's DISCONNECT event
        }
    }

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Trace, Message = "cid:{Cid} - <<- [{Op}]")]
        public static partial void TraceIn(ILogger logger, ulong cid, ClientOp op);
    }
}
