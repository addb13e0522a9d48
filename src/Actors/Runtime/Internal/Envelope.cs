namespace Courier.Actors.Runtime.Internal;

/// <summary>A user message and its sender as queued in a mailbox (a struct: no allocation per Tell).</summary>
internal readonly record struct Envelope(object Message, IActorRef? Sender);
