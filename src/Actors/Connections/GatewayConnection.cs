using System.Buffers;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Gateway;
using Courier.Actors.Routing;
using Courier.Protocols.Nats;
using Courier.Protocols.Subjects;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Connections;

/// <summary>
/// A gateway link, nats-server 2.9's gateway protocol (INFO/CONNECT, RS+/RS-, RMSG/HMSG with the account),
/// either direction. Outbound (dialled for one remote gateway): it carries this cluster's messages there;
/// the remote's RS+ interest sits in each account's subject space as subscriptions of this connection,
/// so on the publish path it is just another subscriber (<see cref="Publisher"/>, DESIGN.md §3).
/// Inbound (accepted): it receives the remote cluster's messages and publishes them here as a
/// <see cref="PublisherKind.Gateway"/>; this cluster's interest goes back over it (<see cref="GatewayTable"/>).
/// </summary>
internal sealed partial class GatewayConnection : Connection
{
    private readonly GatewayLinkContext _context;
    private readonly RouteParser _parser;

    public GatewayConnection(GatewayLinkContext context, Stream stream, Socket socket, ulong id, IActorRef owner, GatewayLink link)
        : base(context.Node, new Transport(stream, socket), id, owner, PublisherKind.Gateway)
    {
        _context = context;
        Link = link;
        var options = context.Node.Options;
        _parser = new RouteParser(options.MaxControlLine, Math.Max(options.MaxPayload, RouteParser.DefaultMaxPayload));
        Publisher.Echo = false;
        BindAccount(context.Node.Accounts.Global);
    }

    /// <inheritdoc />
    public override ConnectionKind Kind => ConnectionKind.Gateway;

    /// <summary>The link's state: its direction, what the other side said.</summary>
    public GatewayLink Link { get; }

    /// <summary>An inbound link's accounts switched to interest-only mode; guarded by the <see cref="GatewayTable"/>'s lock.</summary>
    internal HashSet<Account> Switched { get; } = new(ReferenceEqualityComparer.Instance);

    /// <summary>An inbound link sends its INFO at once; an outbound one waits for the remote's (nats-server's createGateway).</summary>
    public override void Start()
    {
        if (!Link.Outbound)
        {
            Outbound.Write(ProtocolWriter.Info(JsonSerializer.SerializeToUtf8Bytes(OwnInfo(), NatsJsonContext.Default.GatewayInfo)));
        }

        if (LinkTls is { } tls && Transport.Socket is not null)
        {
            // The INFO waits in the outbound: it is the first encrypted frame.
            _readPump = Task.Run(() => SecureAndRunAsync(tls));
            return;
        }

        Outbound.Signal();
        _writePump = Task.Run(RunWritePumpAsync);
        _readPump = Task.Run(RunReadPumpAsync);
    }

    /// <summary>This link's TLS: an outbound link's remote's own block or the gateway block's, an inbound link's the gateway block's.</summary>
    private TlsTransport? LinkTls => Link.Outbound ? _context.OutboundTls(Link.Remote) : _context.Tls;

    /// <summary>
    /// A gateway with <c>gateway { tls { } }</c>, as nats-server 2.9's createGateway: the handshake before
    /// anything else, as the TLS client when this node dialled (the URL's host names the peer) and as the
    /// server when it accepted, the peer's certificate verified both ways; then INFO/CONNECT and the pumps
    /// over the encrypted stream. A failure is logged as nats-server logs it (<c>gid:N - TLS gateway
    /// handshake error: ...</c>) and closes this link only.
    /// </summary>
    private async Task SecureAndRunAsync(TlsTransport tls)
    {
        var peer = Link.Outbound ? Link.Url!.Host.Trim('[', ']') : null;
        if (!await TrySecureAsync(tls, "gid", "TLS gateway handshake error", peer).ConfigureAwait(false))
        {
            return;
        }

        Outbound.Signal();
        _writePump = Task.Run(RunWritePumpAsync);
        await RunReadPumpAsync().ConfigureAwait(false);
    }

    /// <summary>Never called: the publisher sends to gateway links itself, once per link (<see cref="Publisher"/>).</summary>
    internal override bool WriteMessage(Subscription sub, ref MsgTemplates templates, in ReadOnlySequence<byte> payload, Publisher from) =>
        throw new System.Diagnostics.UnreachableException("a gateway link's subscriptions are sent to by the publisher's gateway targets");

    /// <summary>Another cluster's interest is never told to routes: each node of this cluster has its own outbound link.</summary>
    internal override bool TellsRoutes(Subscription sub) => false;

    /// <inheritdoc />
    private protected override void OnClosing() => _context.Gateways.Unregister(this);

    /// <inheritdoc />
    internal override ReadOutcome Process(ref ReadOnlySequence<byte> buffer)
    {
        var reader = new SequenceReader<byte>(buffer);
        var command = default(RouteCommand);
        var outcome = ReadOutcome.Continue;
        var link = Link;
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
                Log.ProtocolError(_log, Id, NatsErrors.ToText(error));
                outcome = Fatal(null, "Parse Error");
                break;
            }

            // An inbound link must CONNECT first (nats-server's expectConnect).
            if (!link.Outbound && !link.ConnectReceived && command.Op != RouteOp.Connect)
            {
                outcome = Fatal(NatsErrors.AuthorizationViolation, "Authentication Failure");
                break;
            }

            switch (command.Op)
            {
                case RouteOp.Msg:
                case RouteOp.HMsg:
                    if (link.Outbound)
                    {
                        break; // messages only come in over inbound links
                    }

                    if (command.Account.SequenceEqual(Publisher.Account.NameUtf8) || SwitchAccount(command.Account))
                    {
                        PublishInbound(command.Subject, command.ReplyTo, command.HeaderSize, command.Payload, command.Queues);
                    }
                    else
                    {
                        Publisher.Count((int)command.Payload.Length);
                    }

                    break;
                case RouteOp.Sub:
                    ProcessRemoteSub(command.Account, command.Subject, command.Queue, command.Weight);
                    break;
                case RouteOp.Unsub:
                    ProcessRemoteUnsub(command.Account, command.Subject, command.Queue);
                    break;
                case RouteOp.Ping:
                    WriteOwn(ProtocolWriter.Pong);
                    break;
                case RouteOp.Pong:
                    ReceivedPong();
                    break;
                case RouteOp.Info:
                    outcome = ProcessGatewayInfo(command.Arguments);
                    break;
                case RouteOp.Connect:
                    outcome = ProcessGatewayConnect(command.Arguments);
                    break;
                case RouteOp.Err:
                    Log.GatewayError(_log, Id, Encoding.UTF8.GetString(command.Arguments));
                    outcome = CloseWith("Parse Error");
                    break;
                default:
                    break; // +OK
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

    // A message from the other cluster: a mapped reply (_GR_.<cluster>.<server>.<reply>) for this cluster is
    // delivered on its original subject, one for another cluster is dropped (nats-server's handleGatewayReply).
    private void PublishInbound(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload, ReadOnlySpan<byte> queues)
    {
        if (GatewayReply.IsMapped(subject))
        {
            if (!GatewayReply.ClusterHash(subject).SequenceEqual(_context.Gateways.ClusterHash))
            {
                Publisher.Count((int)payload.Length);
                return;
            }

            subject = GatewayReply.Unmapped(subject);
        }

        Publisher.Publish(subject, subject, replyTo, headerSize, payload, queues);
    }

    private bool SwitchAccount(ReadOnlySpan<byte> name)
    {
        if (_context.Node.Accounts.Find(name) is not { } account)
        {
            return false;
        }

        Publisher.SwitchAccount(account);
        return true;
    }

    // The INFO both sides send: this cluster's gateway name and URL, interest-only mode for every account.
    private GatewayInfo OwnInfo()
    {
        var options = _context.Node.Options;
        var gateway = options.Gateway;
        var host = gateway.Host is "0.0.0.0" or "::" or "" ? (Transport.Socket?.LocalEndPoint as IPEndPoint)?.Address.ToString() ?? "127.0.0.1" : gateway.Host;
        if (host.Contains(':'))
        {
            host = $"[{host}]";
        }

        var port = _context.Gateways.ListenPort;
        return new GatewayInfo
        {
            ServerId = _context.ServerId,
            ServerName = _context.ServerName,
            Version = options.NatsServerVersion,
            Go = "courier " + Server.Broker.CourierVersion,
            Host = host,
            Port = port,
            Headers = true,
            AuthRequired = gateway.Username is not null,
            TlsRequired = _context.Tls is not null, // nats-server: both true with a gateway tls block
            TlsVerify = _context.Tls is not null,
            MaxPayload = options.MaxPayload,
            Gateway = _context.Gateways.Name,
            GatewayUrls = port > 0 ? [$"{host}:{port}"] : null,
            NewReplyPrefix = true,
            InterestOnlyMode = true,
        };
    }

    // CONNECT {"echo":false,"verbose":false,"pedantic":false,"user":..,"pass":..,"tls_required":false,"name":<server id>,"gateway":<name>}
    private ReadOutcome ProcessGatewayConnect(ReadOnlySpan<byte> json)
    {
        var link = Link;
        if (link.Outbound)
        {
            return Fatal(null, "Protocol Violation"); // the accepting side never sends CONNECT
        }

        if (link.ConnectReceived)
        {
            return ReadOutcome.Continue;
        }

        if (!TryReadJson(json, NatsJsonContext.Default.GatewayConnect, out var connect))
        {
            return Fatal(null, "Parse Error");
        }

        if (string.IsNullOrEmpty(connect.Gateway))
        {
            // A client or a route on the gateway port: nats-server's ErrClientOrRouteConnectedToGatewayPort.
            return Fatal("attempted to connect to gateway port", "Wrong Port");
        }

        var options = _context.Node.Options.Gateway;
        if (options.RejectUnknown && !IsConfigured(connect.Gateway))
        {
            Log.Rejected(_log, Id, connect.Gateway);
            return Fatal($"Connection to gateway \"{_context.Gateways.Name}\" rejected", "Wrong Gateway");
        }

        if (options.Username is { } user && (connect.User != user || !Server.Authentication.Secrets.Equal(options.Password, connect.Pass)))
        {
            return Fatal(NatsErrors.AuthorizationViolation, "Authentication Failure");
        }

        link.Name = connect.Gateway;
        link.RemoteId = connect.Name;
        link.ConnectReceived = true;
        Rtt = DateTime.UtcNow - Started;
        Owner.Tell(ConnectionActor.Protocol.Connected.Instance);
        return ReadOutcome.Continue;
    }

    private bool IsConfigured(string name)
    {
        foreach (var remote in _context.Node.Options.Gateway.Remotes)
        {
            if (remote.Name == name)
            {
                return true;
            }
        }

        return false;
    }

    // INFO {json}: on an outbound link the remote's first INFO (we CONNECT and register) and later commands;
    // on an inbound link the INFO after the CONNECT registers it (nats-server's processGatewayInfo).
    private ReadOutcome ProcessGatewayInfo(ReadOnlySpan<byte> json)
    {
        if (!TryReadJson(json, NatsJsonContext.Default.GatewayInfo, out var info))
        {
            return Fatal(null, "Parse Error");
        }

        var link = Link;
        if (!link.Outbound)
        {
            if (link.Registered || string.IsNullOrEmpty(info.Gateway))
            {
                return ReadOutcome.Continue;
            }

            link.RemoteId = info.ServerId;
            link.Headers = info.Headers;
            link.RemoteUrls = info.GatewayUrls;
            _context.Gateways.RegisterInbound(this);
            Log.InboundRegistered(_log, Id, info.Gateway, info.ServerId);
            if (info.GatewayUrls is { Length: > 0 } urls)
            {
                _context.Implicit(info.Gateway, urls); // dial back if no outbound link to it exists
            }

            GossipTo(info.Gateway);
            return ReadOutcome.Continue;
        }

        if (string.IsNullOrEmpty(info.Gateway))
        {
            Log.GatewayError(_log, Id, $"Attempt to connect to gateway \"{link.Name}\" using wrong port");
            return Fatal($"Attempt to connect to gateway \"{link.Name}\" using wrong port", "Wrong Port");
        }

        if (info.Gateway != link.Name)
        {
            if (link.Registered && info.Command == GatewayCommands.Gossip)
            {
                if (info.GatewayUrls is { Length: > 0 } gossiped && (!_context.Node.Options.Gateway.RejectUnknown || IsConfigured(info.Gateway)))
                {
                    _context.Implicit(info.Gateway, gossiped);
                }

                return ReadOutcome.Continue;
            }

            var text = $"Connection from \"{_context.Gateways.Name}\" rejected, wanted to connect to \"{link.Name}\", this is \"{info.Gateway}\"";
            Log.GatewayError(_log, Id, text);
            return Fatal(text, "Wrong Gateway");
        }

        if (link.Registered)
        {
            // AllSubsStart / AllSubsComplete: this side is in interest-only mode for every account from the
            // start (each side says gateway_iom), so the RS+ between them are taken as they come.
            return ReadOutcome.Continue;
        }

        if (!info.InterestOnlyMode)
        {
            // A peer before nats-server 2.9 starts every account in optimistic mode, which this side does not
            // speak: it would send nothing until that peer's RS+ came. Refused rather than half working.
            var text = $"gateway \"{info.Gateway}\" does not use interest-only mode (nats-server 2.9 or later is required)";
            Log.GatewayError(_log, Id, text);
            return Fatal(text, "Wrong Gateway");
        }

        link.RemoteId = info.ServerId;
        link.Headers = info.Headers;
        link.ClusterHash = Encoding.ASCII.GetBytes(GatewayReply.Hash(info.Gateway));
        SendConnect(link);
        Outbound.Write(ProtocolWriter.Info(JsonSerializer.SerializeToUtf8Bytes(OwnInfo(), NatsJsonContext.Default.GatewayInfo)));
        Publisher.Touch(Outbound);
        if (!_context.Gateways.RegisterOutbound(this))
        {
            return CloseWith("Duplicate Gateway");
        }

        Rtt = DateTime.UtcNow - Started;
        Owner.Tell(ConnectionActor.Protocol.Connected.Instance);
        Log.OutboundRegistered(_log, Id, link.Name ?? "", info.ServerId);
        return ReadOutcome.Continue;
    }

    private void SendConnect(GatewayLink link)
    {
        var url = link.Url!;
        var options = _context.Node.Options.Gateway;
        string? user = options.Username, pass = options.Password;
        if (url.UserInfo.Length > 0)
        {
            var colon = url.UserInfo.IndexOf(':');
            user = Uri.UnescapeDataString(colon < 0 ? url.UserInfo : url.UserInfo[..colon]);
            pass = colon < 0 ? null : Uri.UnescapeDataString(url.UserInfo[(colon + 1)..]);
        }

        var connect = new GatewayConnect { User = user, Pass = pass, TlsRequired = LinkTls is not null, Name = _context.ServerId, Gateway = _context.Gateways.Name };
        Outbound.Write(Encoding.UTF8.GetBytes("CONNECT " + JsonSerializer.Serialize(connect, NatsJsonContext.Default.GatewayConnect) + "\r\n"));
    }

    // INFO {"server_id":..,"gateway":<other>,"gateway_urls":[..],"gateway_cmd":1} for each other configured gateway
    // (nats-server's gossipGatewaysToInboundGateway), so the dialler joins the full mesh.
    private void GossipTo(string remoteName)
    {
        foreach (var remote in _context.Node.Options.Gateway.Remotes)
        {
            if (remote.Name == remoteName || remote.Urls.Count == 0)
            {
                continue;
            }

            var urls = remote.Urls.ConvertAll(u => $"{u.Host}:{u.Port}").ToArray();
            var info = new GatewayInfo { ServerId = _context.ServerId, Gateway = remote.Name, GatewayUrls = urls, Command = GatewayCommands.Gossip };
            Outbound.Write(ProtocolWriter.Info(JsonSerializer.SerializeToUtf8Bytes(info, NatsJsonContext.Default.GatewayInfo)));
        }

        Outbound.Signal();
    }

    // RS+ <account> <subject> [<queue> <weight>]   (outbound links only: the remote's interest)
    private void ProcessRemoteSub(ReadOnlySpan<byte> accountName, ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> queueBytes, int weight)
    {
        if (!Link.Outbound || _context.Node.Accounts.Find(accountName) is not { } account || !SubjectRules.IsValidSubject(subjectBytes))
        {
            return;
        }

        var key = RemoteKey(accountName, subjectBytes, queueBytes);
        lock (_subsLock)
        {
            if (_subs.TryGetValue(key, out var existing))
            {
                existing.Weight = Math.Max(weight, 1);
                return;
            }
        }

        var subject = Encoding.UTF8.GetString(subjectBytes);
        var sub = new Subscription(this, account, subject, queueBytes.IsEmpty ? null : Encoding.UTF8.GetString(queueBytes), Encoding.UTF8.GetBytes(key), account.Space.ShardForSubscription(subjectBytes))
        {
            Weight = queueBytes.IsEmpty ? 1 : Math.Max(weight, 1),
        };
        lock (_subsLock)
        {
            _subs[key] = sub;
        }

        _pendingChanges.Add(new SubChange(sub, Add: true));
    }

    // RS- <account> <subject> [<queue>]
    private void ProcessRemoteUnsub(ReadOnlySpan<byte> account, ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> queueBytes)
    {
        var key = RemoteKey(account, subjectBytes, queueBytes);
        Subscription? removed;
        lock (_subsLock)
        {
            if (!_subs.Remove(key, out removed))
            {
                return;
            }
        }

        _pendingChanges.Add(new SubChange(removed, Add: false));
    }

    private static string RemoteKey(ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue) =>
        queue.IsEmpty
            ? $"{Encoding.UTF8.GetString(account)} {Encoding.UTF8.GetString(subject)}"
            : $"{Encoding.UTF8.GetString(account)} {Encoding.UTF8.GetString(subject)} {Encoding.UTF8.GetString(queue)}";

    public override string ToString() => $"gid:{Id} {RemoteIp}:{RemotePort}";

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Error, Message = "gid:{Gid} - Gateway Error '{Error}'")]
        public static partial void GatewayError(ILogger logger, ulong gid, string error);

        [LoggerMessage(Level = LogLevel.Error, Message = "gid:{Gid} - Gateway protocol error: {Error}")]
        public static partial void ProtocolError(ILogger logger, ulong gid, string error);

        [LoggerMessage(Level = LogLevel.Error, Message = "gid:{Gid} - Rejecting connection from gateway \"{Name}\"")]
        public static partial void Rejected(ILogger logger, ulong gid, string name);

        [LoggerMessage(Level = LogLevel.Information, Message = "gid:{Gid} - Inbound gateway connection from \"{Name}\" ({Id}) registered")]
        public static partial void InboundRegistered(ILogger logger, ulong gid, string name, string id);

        [LoggerMessage(Level = LogLevel.Information, Message = "gid:{Gid} - Outbound gateway connection to \"{Name}\" ({Id}) registered")]
        public static partial void OutboundRegistered(ILogger logger, ulong gid, string name, string id);
    }
}
