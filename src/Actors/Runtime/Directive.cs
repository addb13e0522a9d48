namespace Courier.Actors.Runtime;

/// <summary>What a supervisor does with a failed child (Akka.NET <c>Directive</c>, same order).</summary>
public enum Directive
{
    /// <summary>Keep the instance and its state; the failing message is dropped.</summary>
    Resume,

    /// <summary>Replace the instance with a fresh one from the Props factory; the ref and mailbox are kept.</summary>
    Restart,

    /// <summary>Fail the supervisor itself with the same exception; its own supervisor decides.</summary>
    Escalate,

    /// <summary>Stop the child.</summary>
    Stop,
}
